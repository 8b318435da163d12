rule extract_graph:
    input:
        tree=layout("tree"),
        manifest=layout("manifest"),
        symbols=layout("symbols"),
    output:
        layout("graph"),
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
