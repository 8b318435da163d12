from crmatrix.pipeline import jobs
from crmatrix.stages import prepare_model

with jobs.job(snakemake.log[0], snakemake.output):
    prepare_model.run(snakemake.wildcards.model, dict(snakemake.params.model), snakemake.output[0])
