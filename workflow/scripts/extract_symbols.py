from crmatrix.pipeline import jobs
from crmatrix.stages import extract_symbols

with jobs.job(snakemake.log[0], snakemake.output):
    extract_symbols.run(snakemake.input.tree, snakemake.input.manifest, snakemake.output[0])
