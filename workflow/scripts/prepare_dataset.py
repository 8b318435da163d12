from crmatrix import jobs, pipeline

with jobs.job(snakemake.log[0], snakemake.output):
    pipeline.prepare_dataset(
        snakemake.input.file,
        snakemake.params.format,
        snakemake.params.corpus,
        snakemake.input.manifest,
        snakemake.input.symbols,
        snakemake.output.tasks,
        snakemake.output.qrels,
    )
