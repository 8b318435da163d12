rule extract_symbols:
    input:
        tree="results/corpora/{corpus}/tree",
        manifest="results/corpora/{corpus}/manifest.json",
    output:
        "results/symbols/{corpus}.jsonl",
    log:
        "logs/extract_symbols/{corpus}.log",
    benchmark:
        "logs/benchmarks/extract_symbols/{corpus}.tsv"
    conda:
        "../../envs/crmatrix.yaml"
    threads: 1
    resources:
        mem_mb=1024,
        runtime=20,
    params:
        code=code("extract_symbols"),
    script:
        "../scripts/extract_symbols.py"
