rule extract_graph:
    input:
        tree="results/corpora/{corpus}/tree",
        manifest="results/corpora/{corpus}/manifest.json",
        symbols="results/symbols/{corpus}.jsonl",
    output:
        "results/graph/{corpus}.json",
    log:
        "logs/extract_graph/{corpus}.log",
    benchmark:
        "logs/benchmarks/extract_graph/{corpus}.tsv"
    conda:
        "../../envs/crmatrix.yaml"
    threads: 1
    resources:
        mem_mb=1024,
        runtime=20,
    params:
        code=code("extract_graph"),
    script:
        "../scripts/extract_graph.py"
