from crmatrix import jobs, pipeline

with jobs.job(snakemake.log[0], snakemake.output):
    pipeline.prepare_model(dict(snakemake.params.model), snakemake.output[0])
