from crmatrix.pipeline import jobs
from crmatrix.stages import cell_stats

with jobs.job(snakemake.log[0], snakemake.output):
    cell_stats.run(
        snakemake.input.run,
        snakemake.input.get("base"),
        snakemake.params.headline_method,
        snakemake.params.format,
        snakemake.output[0],
    )
