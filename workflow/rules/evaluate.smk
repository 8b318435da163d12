rule evaluate_arm:
    input:
        unpack(evaluate_inputs),
    output:
        run="results/runs/{dataset}/{system}/{arm}.json",
        trec=directory("results/trec/{dataset}/{system}/{arm}"),
    params:
        code=CODE["evaluate_arm"],
        system=lambda wc: CFG["systems"][wc.system],
        env=lambda wc: CFG["arms"][wc.arm],
        top_k=CFG["top_k"],
        cache_dir=CFG["cache_dir"],
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
