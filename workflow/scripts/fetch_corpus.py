from crmatrix.pipeline import jobs, locations
from crmatrix.stages import fetch_corpus

with jobs.job(snakemake.log[0], snakemake.output):
    fetch_corpus.run(
        snakemake.wildcards.corpus,
        snakemake.params.corpus,
        snakemake.output.tree,
        snakemake.output.manifest,
        locations.mirrors(),
        locations.registries(),
    )
