rule build_index:
    input:
        symbols="results/symbols/{corpus}.jsonl",
        manifest="results/corpora/{corpus}/manifest.json",
        model=lambda wc: f"results/models/{experiment.arm_model(CFG, INDEX_ARM[wc.index_key])}",
    output:
        directory("results/index/{corpus}/{system}/{index_key}"),
    params:
        code=code("build_index"),
        env=index_env,
        embed_threads=CFG["embed_threads"],
    threads: 2
    conda:
        "../../envs/crmatrix.yaml"
    log:
        "logs/build_index/{corpus}/{system}/{index_key}.log",
    benchmark:
        "logs/benchmarks/build_index/{corpus}/{system}/{index_key}.tsv"
    script:
        "../scripts/build_index.py"
