rule prepare_dataset:
    input:
        unpack(by(PLAN.dataset_inputs, "dataset")),
    output:
        tasks=layout("tasks"),
        qrels=layout("qrels"),
        summary=layout("summary"),
    log:
        "logs/prepare_dataset/{dataset}.log",
    wildcard_constraints:
        dataset=one_of(PLAIN_DATASETS),
    conda:
        "../../envs/crmatrix.yaml"
    threads: 1
    resources:
        mem_mb=1024,
        runtime=10,
    params:
        code=code("prepare_dataset"),
        dataset_sha256=by(PLAN.dataset_sha256, "dataset"),
        format=lambda wc: MATRIX.datasets[wc.dataset].format,
        corpus=lambda wc: MATRIX.datasets[wc.dataset].corpus,
        split=lambda wc: MATRIX.datasets[wc.dataset].split,
        sample=lambda wc: MATRIX.datasets[wc.dataset].sample,
    script:
        "../scripts/prepare_dataset.py"


rule derive_split:
    input:
        unpack(by(PLAN.split_inputs, "dataset")),
    output:
        tasks=layout("tasks"),
        qrels=layout("qrels"),
        summary=layout("summary"),
    log:
        "logs/derive_split/{dataset}.log",
    wildcard_constraints:
        dataset=one_of(MATRIX.split_datasets),
    conda:
        "../../envs/crmatrix.yaml"
    threads: MATRIX.embed_threads
    resources:
        mem_mb=2048,
        runtime=30,
        # the CPUs a cluster gives it: the embed_threads it runs, which --cores caps in threads: (docs/cluster.md)
        cpus_per_task=MATRIX.embed_threads,
    params:
        code=code("derive_split"),
        dataset_sha256=by(PLAN.dataset_sha256, "dataset"),
        format=lambda wc: MATRIX.datasets[wc.dataset].format,
        split=lambda wc: MATRIX.datasets[wc.dataset].derived_split,
        corpus=lambda wc: MATRIX.datasets[wc.dataset].corpus,
        knobs=lambda wc: PLAN.split_ranker(wc.dataset)["knobs"],
        embed_threads=MATRIX.embed_threads,
    script:
        "../scripts/derive_split.py"


# The grep-and-read baseline of token efficiency: per dataset, shared by every evaluation.
rule grep_baseline:
    input:
        tasks=layout("tasks"),
        tree=lambda wc: PATHS.file("tree", corpus=MATRIX.datasets[wc.dataset].corpus),
        manifest=lambda wc: PATHS.file(
            "manifest", corpus=MATRIX.datasets[wc.dataset].corpus
        ),
        symbols=lambda wc: PATHS.file(
            "symbols", corpus=MATRIX.datasets[wc.dataset].corpus
        ),
    output:
        layout("grep"),
    log:
        "logs/grep_baseline/{dataset}.log",
    benchmark:
        "logs/benchmarks/grep_baseline/{dataset}.tsv"
    conda:
        "../../envs/crmatrix.yaml"
    threads: 1
    resources:
        mem_mb=1024,
        runtime=10,
    params:
        code=code("grep_baseline"),
    script:
        "../scripts/grep_baseline.py"


# What each dataset's queries give away (crmatrix.datasets.audit), beside it in the report: seconds
# over one small file, so a local rule like the aggregations.
localrules:
    audit_dataset,


rule audit_dataset:
    input:
        tasks=layout("tasks"),
    output:
        json=layout("audit", ext="json"),
        md=layout("audit", ext="md"),
        html=report(
            layout("audit", ext="html"),
            caption="../report/audit.rst",
            category="2. Per dataset",
            subcategory="dataset audit",
            labels={"dataset": "{dataset}"},
        ),
    log:
        "logs/audit_dataset/{dataset}.log",
    conda:
        "../../envs/crmatrix.yaml"
    threads: 1
    resources:
        mem_mb=1024,
        runtime=10,
    params:
        code=code("audit_dataset"),
        note=lambda wc: MATRIX.datasets[wc.dataset].note,
    script:
        "../scripts/audit_dataset.py"
