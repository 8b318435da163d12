from crmatrix import jobs, pipeline

with jobs.job(snakemake.log[0], snakemake.output):
    pipeline.build_index(
        symbols=snakemake.input.symbols,
        manifest=snakemake.input.manifest,
        model_dir=snakemake.input.model,
        env=dict(snakemake.params.env),
        cache_dir=snakemake.params.cache_dir,
        out=snakemake.output[0],
        threads=snakemake.params.embed_threads,
    )
