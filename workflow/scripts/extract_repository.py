from crmatrix.pipeline import jobs, locations
from crmatrix.stages import extract_repository

with jobs.job(snakemake.log[0], snakemake.output):
    extract_repository.run(
        snakemake.input[0],
        snakemake.output.store,
        snakemake.output.stats,
        locations.cache_dir(),
    )
