rule evaluate_arm:
    input:
        tasks="results/datasets/{dataset}.jsonl",
        dataset_file=lambda wc: CFG["datasets"][wc.dataset]["file"],
        tree=lambda wc: f"results/corpora/{dataset_corpus(wc)}/tree",
        manifest=lambda wc: f"results/corpora/{dataset_corpus(wc)}/manifest.json",
        symbols=lambda wc: f"results/symbols/{dataset_corpus(wc)}.jsonl",
    output:
        "results/runs/{dataset}/{system}/{arm}.json",
    params:
        system=lambda wc: CFG["systems"][wc.system],
        env=lambda wc: CFG["arms"][wc.arm],
        top_k=CFG["top_k"],
    conda:
        "../../envs/crmatrix.yaml"
    log:
        "logs/evaluate_arm/{dataset}/{system}/{arm}.log",
    benchmark:
        "logs/benchmarks/evaluate_arm/{dataset}/{system}/{arm}.tsv"
    script:
        "../scripts/evaluate_arm.py"
