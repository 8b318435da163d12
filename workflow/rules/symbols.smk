rule extract_symbols:
    input:
        tree="results/corpora/{corpus}/tree",
        manifest="results/corpora/{corpus}/manifest.json",
    output:
        "results/symbols/{corpus}.jsonl",
    params:
        code=code("extract_symbols"),
    threads: 1
    resources:
        mem_mb=1024,
        runtime=20,
    conda:
        "../../envs/crmatrix.yaml"
    log:
        "logs/extract_symbols/{corpus}.log",
    benchmark:
        "logs/benchmarks/extract_symbols/{corpus}.tsv"
    script:
        "../scripts/extract_symbols.py"
