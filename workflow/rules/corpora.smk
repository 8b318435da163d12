rule fetch_corpus:
    input:
        unpack(corpus_inputs),
    output:
        tree=directory("results/corpora/{corpus}/tree"),
        manifest="results/corpora/{corpus}/manifest.json",
    params:
        code=code("fetch_corpus"),
        corpus=corpus_params,
    conda:
        "../../envs/crmatrix.yaml"
    log:
        "logs/fetch_corpus/{corpus}.log",
    benchmark:
        "logs/benchmarks/fetch_corpus/{corpus}.tsv"
    script:
        "../scripts/fetch_corpus.py"
