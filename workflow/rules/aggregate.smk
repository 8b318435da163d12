# Aggregations: seconds of work over small JSON files (a cell's statistics: a second or so of
# bootstrap over one run and its baseline's), so local rules (no queue wait on a cluster); the
# trackers may also reach an MLflow server, which only the submit host may see.
localrules:
    cell_stats,
    collect_matrix,
    collect_callgraph,
    gate_candidates,
    track_run,


# A cell's statistics against the baseline come from its run and the baseline's run alone, so
# a new or changed run costs its own cells and the matrix only assembles them. The job also
# writes its run's times, so that the latency charts read no run.
rule cell_stats:
    input:
        unpack(by(PLAN.cell_inputs, "dataset", "system", "arm")),
    output:
        cell=layout("cell"),
        times=layout("times"),
    log:
        "logs/cell_stats/{dataset}/{system}/{arm}.log",
    benchmark:
        "logs/benchmarks/cell_stats/{dataset}/{system}/{arm}.tsv"
    conda:
        "../../envs/crmatrix.yaml"
    threads: 1
    resources:
        mem_mb=1024,
        runtime=10,
    params:
        code=code("cell_stats"),
        args=job_args(
            headline_method=MATRIX.headline_method,
            format=by(PLAN.matrix_format, "dataset"),
        ),
        files=job_files,
    shell:
        light("cell_stats")


# The phase matrix from the cells alone, its leaderboard of systems and its arms ranked too: each
# cell carries its queries' scores, failures and times, so the matrix reads no run and an added
# arm costs its own cells (the baseline's, which the leaderboard reads, are left be).
rule collect_matrix:
    input:
        cells=PLAN.cell_files(),
        summaries=PLAN.summaries(DATASETS),
    output:
        json=layout("matrix", ext="json"),
        md=layout("matrix", ext="md"),
    log:
        "logs/collect_matrix.log",
    conda:
        "../../envs/crmatrix.yaml"
    threads: 1
    resources:
        mem_mb=1024,
        runtime=10,
    params:
        code=code("collect_matrix"),
        baseline_arm=BASELINE,
        headline_method=MATRIX.headline_method,
        arm_order=list(MATRIX.arms),
        archetypes={d: ds.archetype for d, ds in MATRIX.datasets.items()},
        notes={d: ds.note for d, ds in MATRIX.datasets.items() if ds.note},
        pooled_as={d: ds.pooled_as for d, ds in MATRIX.datasets.items() if ds.pooled_as},
        splits=DATASET_SPLITS,
        comparisons=list(MATRIX.comparisons) if MATRIX.comparisons else None,
        summary_datasets=DATASETS,
        reference=MATRIX.reference_system,
    script:
        "../scripts/collect_matrix.py"


rule collect_callgraph:
    input:
        PLAN.callgraph_files(),
    output:
        json=layout("callgraph_table", ext="json"),
        md=layout("callgraph_table", ext="md"),
    log:
        "logs/collect_callgraph.log",
    conda:
        "../../envs/crmatrix.yaml"
    threads: 1
    resources:
        mem_mb=1024,
        runtime=10,
    params:
        code=code("collect_callgraph"),
    script:
        "../scripts/collect_callgraph.py"


rule gate_candidates:
    input:
        PLAN.compare_files(),
    output:
        json=layout("gate", ext="json"),
        txt=layout("gate", ext="txt"),
    log:
        "logs/gate_candidates.log",
    conda:
        "../../envs/crmatrix.yaml"
    threads: 1
    resources:
        mem_mb=1024,
        runtime=10,
    params:
        code=code("gate_candidates"),
        pairs=MATRIX.compare,
    script:
        "../scripts/gate_candidates.py"


# Each run to the trackers the config names (its JSONL event log is evaluate_arm's own): a job
# per run, so an added arm sends its own runs only.
rule track_run:
    input:
        run=layout("run"),
        trec=layout("trec"),
    output:
        layout("sent"),
    log:
        "logs/track_run/{dataset}/{system}/{arm}.log",
    conda:
        "../../envs/crmatrix.yaml"
    threads: 1
    resources:
        mem_mb=1024,
        runtime=10,
    params:
        code=code("track_run"),
        trackers=MATRIX.trackers,
    script:
        "../scripts/track_run.py"
