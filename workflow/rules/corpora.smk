# A local rule: it clones or downloads (code host, PyPI, npm), which cluster nodes may not
# reach; mostly I/O. Every later job reads its tree from the shared results/.
localrules:
    fetch_corpus,


rule fetch_corpus:
    output:
        tree=directory(layout("tree")),
        manifest=layout("manifest"),
    log:
        "logs/fetch_corpus/{corpus}.log",
    benchmark:
        "logs/benchmarks/fetch_corpus/{corpus}.tsv"
    wildcard_constraints:
        corpus=one_of(MATRIX.corpora_of("fetched")),
    conda:
        "../../envs/crmatrix.yaml"
    threads: 1
    resources:
        mem_mb=1024,
        runtime=30,
    params:
        code=code("fetch_corpus"),
        corpus=by(PLAN.corpus_params, "corpus"),
    script:
        "../scripts/fetch_corpus.py"


# A corpus written out of a benchmark file by its dataset format (repoqa, ds1000): a rule of
# its own, so that fetching runs (and its code hash holds) none of the formats' code.
rule write_corpus:
    input:
        file=lambda wc: MATRIX.corpora[wc.corpus].written_file,
    output:
        tree=directory(layout("tree")),
        manifest=layout("manifest"),
    log:
        "logs/write_corpus/{corpus}.log",
    benchmark:
        "logs/benchmarks/write_corpus/{corpus}.tsv"
    wildcard_constraints:
        corpus=one_of(MATRIX.corpora_of("written")),
    conda:
        "../../envs/crmatrix.yaml"
    threads: 1
    resources:
        mem_mb=1024,
        runtime=30,
    params:
        code=code("write_corpus"),
        file_sha256=lambda wc: PLAN.written_sha256(wc.corpus),
        corpus=by(PLAN.corpus_params, "corpus"),
    script:
        "../scripts/write_corpus.py"


# A corpus's docs-withheld view, made of its tree (crmatrix.corpora.views): once per corpus, for
# every derived dataset of it; its symbols and indexes are built by the rules of any corpus.
rule withhold_docs:
    input:
        tree=lambda wc: PATHS.file("tree", corpus=MATRIX.corpora[wc.corpus].view_of),
        manifest=lambda wc: PATHS.file(
            "manifest", corpus=MATRIX.corpora[wc.corpus].view_of
        ),
    output:
        tree=directory(layout("tree")),
        manifest=layout("manifest"),
    log:
        "logs/withhold_docs/{corpus}.log",
    benchmark:
        "logs/benchmarks/withhold_docs/{corpus}.tsv"
    wildcard_constraints:
        corpus=one_of(MATRIX.corpora_of("view")),
    conda:
        "../../envs/crmatrix.yaml"
    threads: 1
    resources:
        mem_mb=1024,
        runtime=20,
    params:
        code=code("withhold_docs"),
    script:
        "../scripts/withhold_docs.py"
