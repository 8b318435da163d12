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
    params:
        code=code("fetch_corpus"),
        corpus=corpus_params,
    threads: 1
    resources:
        mem_mb=1024,
        runtime=30,
    conda:
        "../../envs/crmatrix.yaml"
    log:
        "logs/fetch_corpus/{corpus}.log",
    benchmark:
        "logs/benchmarks/fetch_corpus/{corpus}.tsv"
    script:
        "../scripts/fetch_corpus.py"
