# A dataset's queries embedded once per model, read by every arm's evaluation (none loads a model).
rule embed_queries:
    input:
        tasks=layout("tasks"),
        model=layout("model"),
    output:
        directory(layout("queries")),
    log:
        "logs/embed_queries/{dataset}/{model}.log",
    benchmark:
        "logs/benchmarks/embed_queries/{dataset}/{model}.tsv"
    conda:
        "../../envs/crmatrix.yaml"
    threads: MATRIX.embed_threads
    # loads the model (at most the index build's, which holds it and a corpus's texts)
    resources:
        mem_mb=2048,
        runtime=20,
        # the CPUs a cluster gives it: the embed_threads it runs, which --cores caps in threads: (docs/cluster.md)
        cpus_per_task=MATRIX.embed_threads,
    params:
        code=code("embed_queries"),
        embed_threads=MATRIX.embed_threads,
    script:
        "../scripts/embed_queries.py"


# What a cell reads and the parameters it takes are its plan (crmatrix.evaluation.cell.CellJob), as in `crmatrix run`.
rule evaluate_arm:
    input:
        unpack(lambda wc: cell(wc).inputs),
    output:
        run=layout("run"),
        trec=directory(layout("trec")),
        tracking=layout("tracking"),
    log:
        "logs/evaluate_arm/{dataset}/{system}/{arm}.log",
    benchmark:
        "logs/benchmarks/evaluate_arm/{dataset}/{system}/{arm}.tsv"
    conda:
        "../../envs/crmatrix.yaml"
    threads: 1
    # maps an index (vectors, BM25) and reads the query vectors, or runs a peer's server
    resources:
        mem_mb=2048,
        runtime=by(PLAN.evaluate_minutes, "system"),
    params:
        code=code("evaluate_arm"),
        # the cell's parameters (crmatrix.evaluation.cell.PARAMS) as one: one function each of the
        # thousands of jobs calls at every check, not six
        args=job_args(
            cell=lambda wc: cell(wc).params, embed_threads=MATRIX.embed_threads
        ),
        files=job_files,
    shell:
        light("evaluate_arm")


# Call-graph edge datasets: the system's callers/callees answers under the baseline arm
# (the builtin engine's graph depends on no arm).
rule evaluate_callgraph:
    input:
        tasks=layout("tasks"),
        tree=lambda wc: PATHS.file("tree", corpus=MATRIX.datasets[wc.dataset].corpus),
        manifest=lambda wc: PATHS.file(
            "manifest", corpus=MATRIX.datasets[wc.dataset].corpus
        ),
        symbols=lambda wc: PATHS.file(
            "symbols", corpus=MATRIX.datasets[wc.dataset].corpus
        ),
        graph=lambda wc: PATHS.file("graph", corpus=MATRIX.datasets[wc.dataset].corpus),
    output:
        layout("callgraph"),
    log:
        "logs/evaluate_callgraph/{dataset}/{system}.log",
    conda:
        "../../envs/crmatrix.yaml"
    threads: 1
    resources:
        mem_mb=1024,
        runtime=30,
    params:
        code=code("evaluate_callgraph"),
        system=by(PLAN.job_conf, "system"),
        env=MATRIX.arms[BASELINE].env,
        knobs=PLAN.knob_spec(BASELINE),
    script:
        "../scripts/evaluate_callgraph.py"
