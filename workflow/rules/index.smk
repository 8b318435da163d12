rule build_index:
    input:
        symbols="results/symbols/{corpus}.jsonl",
        manifest="results/corpora/{corpus}/manifest.json",
        model=lambda wc: f"results/models/{experiment.arm_model(CFG, index_arm(wc))}",
    output:
        directory("results/index/{corpus}/{system}/{index_key}"),
    log:
        "logs/build_index/{corpus}/{system}/{index_key}.log",
    benchmark:
        "logs/benchmarks/build_index/{corpus}/{system}/{index_key}.tsv"
    wildcard_constraints:
        system=BUILTIN_SYSTEMS,
    conda:
        "../../envs/crmatrix.yaml"
    threads: CFG["embed_threads"]
    # measured: 1.21 GiB peak RSS and 132 s for 12073 symbols, fp32 (benchmarks/results/)
    resources:
        mem_mb=2048,
        runtime=60,
    params:
        code=code("build_index"),
        knobs=index_knobs,
        embed_threads=CFG["embed_threads"],
    script:
        "../scripts/build_index.py"


rule build_system_index:
    input:
        unpack(system_venv),
        unpack(index_models),
        tree="results/corpora/{corpus}/tree",
    output:
        directory("results/index/{corpus}/{system}/{index_key}"),
    log:
        "logs/build_system_index/{corpus}/{system}/{index_key}.log",
    benchmark:
        "logs/benchmarks/build_system_index/{corpus}/{system}/{index_key}.tsv"
    wildcard_constraints:
        system=EXTERNAL_SYSTEMS,
    conda:
        "../../envs/crmatrix.yaml"
    threads: 1
    # another tool's indexer: its memory is unknown to us, so a generous default
    resources:
        mem_mb=4096,
        runtime=system_index_minutes,
    params:
        code=code("build_system_index"),
        system=index_system,
        env=index_env,
        home=home_dir,
    script:
        "../scripts/build_system_index.py"
