from crmatrix.pipeline import jobs, locations
from crmatrix.stages import embed_queries

with jobs.job(snakemake.log[0], snakemake.output):
    embed_queries.run(
        tasks=snakemake.input.tasks,
        model_dir=snakemake.input.model,
        cache_dir=locations.cache_dir(),
        out=snakemake.output[0],
        threads=snakemake.params.embed_threads,
    )
