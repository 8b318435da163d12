from crmatrix.pipeline import jobs, locations
from crmatrix.stages import fetch_repository

with jobs.job(snakemake.log[0], snakemake.output):
    fetch_repository.run(
        snakemake.wildcards.corpus,
        snakemake.params.corpus,
        snakemake.output[0],
        locations.mirrors(),
    )
