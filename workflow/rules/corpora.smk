# A local rule: it clones or downloads (code host, PyPI, npm), which cluster nodes may not
# reach; mostly I/O. Every later job reads its tree from the shared results/.
localrules:
    fetch_corpus,


rule fetch_corpus:
    input:
        unpack(corpus_inputs),
    output:
        tree=directory("results/corpora/{corpus}/tree"),
        manifest="results/corpora/{corpus}/manifest.json",
    log:
        "logs/fetch_corpus/{corpus}.log",
    benchmark:
        "logs/benchmarks/fetch_corpus/{corpus}.tsv"
    conda:
        "../../envs/crmatrix.yaml"
    threads: 1
    resources:
        mem_mb=1024,
        runtime=30,
    params:
        code=code("fetch_corpus"),
        corpus=corpus_params,
    script:
        "../scripts/fetch_corpus.py"
