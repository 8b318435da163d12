from crmatrix import jobs, pipeline

with jobs.job(snakemake.log[0], snakemake.output):
    pipeline.fetch_corpus(
        snakemake.wildcards.corpus,
        snakemake.params.corpus,
        snakemake.output.tree,
        snakemake.output.manifest,
        snakemake.params.mirrors,
        snakemake.params.registries,
    )
