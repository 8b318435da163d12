from crmatrix.pipeline import jobs
from crmatrix.stages import extract_graph

with jobs.job(snakemake.log[0], snakemake.output):
    extract_graph.run(snakemake.input.tree, snakemake.input.manifest, snakemake.input.symbols, snakemake.output[0])
