# A local rule: a hub model (`source:` a hub id, with HF_HUB_OFFLINE=0) downloads here, on the
# host that reaches the network. The ONNX export and INT8 quantization hold the model twice.
localrules:
    prepare_model,


rule prepare_model:
    output:
        directory(layout("model")),
    log:
        "logs/prepare_model/{model}.log",
    benchmark:
        "logs/benchmarks/prepare_model/{model}.tsv"
    # every index build waits for it: as early as the largest repository's jobs (repositories.smk)
    priority: max(map(MATRIX.repository_priority, MATRIX.corpora_of("repository")), default=0)
    conda:
        "../../envs/crmatrix.yaml"
    threads: MATRIX.embed_threads
    resources:
        mem_mb=3072,
        runtime=30,
    params:
        code=code("prepare_model"),
        model=lambda wc: MATRIX.models[wc.model].to_conf(),
        # its files by their contents: a new release of a model's package changes them, not the
        # config's words for them (the index key holds the same)
        files=lambda wc: PLAN.model_keys[wc.model],
    script:
        "../scripts/prepare_model.py"
