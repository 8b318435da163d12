# Repository corpora of many commits (`repositories:`, made from a per-task-commit dataset's
# rows, or from the commits of its history a history dataset keeps): one job per repository for
# its commits, one for its symbols, one per index key for its index, so their cost grows with the
# distinct file contents, not the commits; one job per dataset localizes each task at its own
# commit. Each job of a repository has its repository's priority (`Matrix.repository_priority`):
# the largest repository's chain (fetch, store, index builds, a tool's too) starts first.


# A local rule: it reads the mirrors' bundles, which cluster nodes may not see.
localrules:
    fetch_repository,


rule fetch_repository:
    output:
        directory(layout("repository")),
    log:
        "logs/fetch_repository/{corpus}.log",
    benchmark:
        "logs/benchmarks/fetch_repository/{corpus}.tsv"
    wildcard_constraints:
        corpus=one_of(MATRIX.corpora_of("repository")),
    priority: lambda wc: MATRIX.repository_priority(wc.corpus)
    conda:
        "../../envs/crmatrix.yaml"
    threads: 1
    resources:
        mem_mb=1024,
        runtime=30,
    params:
        code=code("fetch_repository"),
        corpus=by(PLAN.corpus_params, "corpus"),
    script:
        "../scripts/fetch_repository.py"


# Each distinct file parsed once ever (the symbol cache under cache_dir), the store written whole.
rule extract_repository:
    input:
        layout("repository"),
    output:
        store=directory(layout("store")),
        stats=layout("store_stats"),
    log:
        "logs/extract_repository/{corpus}.log",
    benchmark:
        "logs/benchmarks/extract_repository/{corpus}.tsv"
    wildcard_constraints:
        corpus=one_of(MATRIX.corpora_of("repository")),
    priority: lambda wc: MATRIX.repository_priority(wc.corpus)
    conda:
        "../../envs/crmatrix.yaml"
    threads: 1
    # every distinct file's symbols at once (sympy: 16k files, 860k symbols)
    resources:
        mem_mb=6144,
        runtime=120,
    params:
        code=code("extract_repository"),
    script:
        "../scripts/extract_repository.py"


rule build_repository_index:
    input:
        unpack(by(PLAN.repository_index_inputs, "system", "corpus", "index_key")),
    output:
        directory(layout("index")),
    log:
        "logs/build_repository_index/{corpus}/{system}/{index_key}.log",
    benchmark:
        "logs/benchmarks/build_repository_index/{corpus}/{system}/{index_key}.tsv"
    wildcard_constraints:
        system=one_of(PLAN.embedding_systems()),
        corpus=one_of(MATRIX.corpora_of("repository")),
    priority: lambda wc: MATRIX.repository_priority(wc.corpus)
    conda:
        "../../envs/crmatrix.yaml"
    threads: MATRIX.embed_threads
    resources:
        mem_mb=6144,
        runtime=240,
        # the CPUs a cluster gives it: the embed_threads it runs, which --cores caps in threads: (docs/cluster.md)
        cpus_per_task=MATRIX.embed_threads,
    params:
        code=code("build_repository_index"),
        knobs=by(PLAN.index_knobs, "system", "corpus", "index_key"),
        files=by(PLAN.indexes_files, "system"),
        embed_threads=MATRIX.embed_threads,
    script:
        "../scripts/build_repository_index.py"


rule localize_tasks:
    input:
        unpack(by(PLAN.localize_inputs, "dataset")),
    output:
        tasks=layout("tasks"),
        qrels=layout("qrels"),
        summary=layout("summary"),
    log:
        "logs/localize_tasks/{dataset}.log",
    wildcard_constraints:
        dataset=one_of(MATRIX.localized_datasets),
    priority: lambda wc: MATRIX.repository_priority(MATRIX.datasets[wc.dataset].corpus)
    conda:
        "../../envs/crmatrix.yaml"
    threads: 1
    resources:
        mem_mb=2048,
        runtime=30,
    params:
        code=code("localize_tasks"),
        dataset_sha256=by(PLAN.dataset_sha256, "dataset"),
        corpus=lambda wc: MATRIX.datasets[wc.dataset].corpus,
        repo=lambda wc: MATRIX.datasets[wc.dataset].repository,
        level=lambda wc: MATRIX.datasets[wc.dataset].level,
        tasks=lambda wc: MATRIX.datasets[wc.dataset].tasks,
        history=lambda wc: MATRIX.datasets[wc.dataset].history,
    script:
        "../scripts/localize_tasks.py"
