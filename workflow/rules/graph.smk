rule extract_graph:
    input:
        tree="results/corpora/{corpus}/tree",
        manifest="results/corpora/{corpus}/manifest.json",
        symbols="results/symbols/{corpus}.jsonl",
    output:
        "results/graph/{corpus}.json",
    params:
        code=code("extract_graph"),
    threads: 1
    resources:
        mem_mb=1024,
        runtime=20,
    conda:
        "../../envs/crmatrix.yaml"
    log:
        "logs/extract_graph/{corpus}.log",
    benchmark:
        "logs/benchmarks/extract_graph/{corpus}.tsv"
    script:
        "../scripts/extract_graph.py"
