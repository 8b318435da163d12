rule prepare_dataset:
    input:
        file=lambda wc: CFG["datasets"][wc.dataset]["file"],
        manifest=lambda wc: f"results/corpora/{dataset_corpus(wc)}/manifest.json",
        symbols=lambda wc: f"results/symbols/{dataset_corpus(wc)}.jsonl",
    output:
        tasks="results/datasets/{dataset}.jsonl",
        qrels="results/trec/{dataset}.qrels",
    params:
        code=code("prepare_dataset"),
        format=lambda wc: CFG["datasets"][wc.dataset]["format"],
        corpus=dataset_corpus,
    conda:
        "../../envs/crmatrix.yaml"
    log:
        "logs/prepare_dataset/{dataset}.log",
    script:
        "../scripts/prepare_dataset.py"
