rule build_index:
    input:
        unpack(by(PLAN.index_inputs, "system", "corpus", "index_key")),
    output:
        directory(layout("index")),
    log:
        "logs/build_index/{corpus}/{system}/{index_key}.log",
    benchmark:
        "logs/benchmarks/build_index/{corpus}/{system}/{index_key}.tsv"
    wildcard_constraints:
        system=one_of(PLAN.embedding_systems()),
        corpus=one_of(TREE_CORPORA),
    conda:
        "../../envs/crmatrix.yaml"
    threads: MATRIX.embed_threads
    # measured: 1.21 GiB peak RSS and 132 s for 12073 symbols, fp32 (benchmarks/results/)
    resources:
        mem_mb=2048,
        runtime=60,
        # the CPUs a cluster gives it: the embed_threads it runs, which --cores caps in threads: (docs/cluster.md)
        cpus_per_task=MATRIX.embed_threads,
    params:
        code=code("build_index"),
        knobs=by(PLAN.index_knobs, "system", "corpus", "index_key"),
        embed_threads=MATRIX.embed_threads,
    script:
        "../scripts/build_index.py"


rule build_system_index:
    input:
        unpack(by(PLAN.venv_inputs, "system")),
        unpack(by(PLAN.index_model_inputs, "system")),
        tree=layout("tree"),
    output:
        directory(layout("index")),
    log:
        "logs/build_system_index/{corpus}/{system}/{index_key}.log",
    benchmark:
        "logs/benchmarks/build_system_index/{corpus}/{system}/{index_key}.tsv"
    wildcard_constraints:
        system=one_of(PLAN.command_index_systems()),
        corpus=one_of(TREE_CORPORA),
    conda:
        "../../envs/crmatrix.yaml"
    threads: 1
    # another tool's indexer: its memory is unknown to us, so a generous default
    resources:
        mem_mb=4096,
        runtime=by(PLAN.system_index_minutes, "system"),
    params:
        code=code("build_system_index"),
        system=by(PLAN.index_conf, "system"),
        env=by(PLAN.index_env, "system", "corpus", "index_key"),
        home=home_dir,
    script:
        "../scripts/build_system_index.py"


# On a repository of many commits: the tool's index of each distinct tree of its commits, kept
# in a cache by the tree's content (results/tree-index/...), so a new commit costs its tree's
# index alone; the output lists them (crmatrix.versions.commits).
rule build_system_index_commits:
    input:
        unpack(by(PLAN.venv_inputs, "system")),
        unpack(by(PLAN.index_model_inputs, "system")),
        repository=layout("repository"),
    output:
        directory(layout("index")),
    log:
        "logs/build_system_index_commits/{corpus}/{system}/{index_key}.log",
    benchmark:
        "logs/benchmarks/build_system_index_commits/{corpus}/{system}/{index_key}.tsv"
    wildcard_constraints:
        system=one_of(PLAN.command_index_systems()),
        corpus=one_of(MATRIX.corpora_of("repository")),
    # the largest repository first, as its store and the builtin's indexes (repositories.smk)
    priority: lambda wc: MATRIX.repository_priority(wc.corpus)
    conda:
        "../../envs/crmatrix.yaml"
    threads: 1
    # another tool's indexer, once per tree: its memory is unknown to us, so a generous default
    resources:
        mem_mb=4096,
        runtime=by(PLAN.system_index_commits_minutes, "system", "corpus"),
    params:
        code=code("build_system_index_commits"),
        system=by(PLAN.index_conf, "system"),
        env=by(PLAN.index_env, "system", "corpus", "index_key"),
        home=home_dir,
        cache=layout("tree_index"),
    script:
        "../scripts/build_system_index_commits.py"
