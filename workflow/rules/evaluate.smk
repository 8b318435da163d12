rule evaluate_arm:
    input:
        unpack(evaluate_inputs),
    output:
        run="results/runs/{dataset}/{system}/{arm}.json",
        trec=directory("results/trec/{dataset}/{system}/{arm}"),
    params:
        code=code("evaluate_arm"),
        system=lambda wc: CFG["systems"][wc.system],
        env=lambda wc: experiment.arm_env(CFG, wc.arm),
        top_k=CFG["top_k"],
        home=home_dir,
        embed_threads=CFG["embed_threads"],
    threads: 1
    conda:
        "../../envs/crmatrix.yaml"
    log:
        "logs/evaluate_arm/{dataset}/{system}/{arm}.log",
    benchmark:
        "logs/benchmarks/evaluate_arm/{dataset}/{system}/{arm}.tsv"
    script:
        "../scripts/evaluate_arm.py"
