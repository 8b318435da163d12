rule extract_symbols:
    input:
        tree=layout("tree"),
        manifest=layout("manifest"),
    output:
        layout("symbols"),
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
