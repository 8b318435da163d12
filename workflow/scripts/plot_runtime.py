from crmatrix.pipeline import jobs
from crmatrix.stages import plot_runtime

with jobs.job(snakemake.log[0], snakemake.output):
    plot_runtime.run(out=snakemake.output[0])
