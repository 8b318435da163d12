from crmatrix import jobs, pipeline

with jobs.job(snakemake.log[0], snakemake.output):
    pipeline.extract_symbols(
        snakemake.input.tree, snakemake.input.manifest, snakemake.output[0]
    )
