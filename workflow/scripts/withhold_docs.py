from crmatrix.pipeline import jobs
from crmatrix.stages import withhold_docs

with jobs.job(snakemake.log[0], snakemake.output):
    withhold_docs.run(
        snakemake.wildcards.corpus,
        snakemake.input.tree,
        snakemake.input.manifest,
        snakemake.output.tree,
        snakemake.output.manifest,
    )
