from crmatrix.pipeline import jobs
from crmatrix.stages import collect_callgraph

with jobs.job(snakemake.log[0], snakemake.output):
    collect_callgraph.run(snakemake.input, snakemake.output.json, snakemake.output.md)
