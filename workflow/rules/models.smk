rule prepare_model:
    output:
        directory("results/models/{model}"),
    params:
        code=code("prepare_model"),
        model=lambda wc: CFG["models"][wc.model],
    conda:
        "../../envs/crmatrix.yaml"
    log:
        "logs/prepare_model/{model}.log",
    benchmark:
        "logs/benchmarks/prepare_model/{model}.tsv"
    script:
        "../scripts/prepare_model.py"
