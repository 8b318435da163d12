from crmatrix.pipeline import jobs
from crmatrix.stages import grep_baseline

with jobs.job(snakemake.log[0], snakemake.output):
    grep_baseline.run(
        tasks=snakemake.input.tasks,
        tree=snakemake.input.tree,
        manifest=snakemake.input.manifest,
        symbols=snakemake.input.symbols,
        out=snakemake.output[0],
    )
