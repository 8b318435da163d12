from crmatrix.pipeline import jobs, locations
from crmatrix.stages import build_index

with jobs.job(snakemake.log[0], snakemake.output):
    build_index.run(
        symbols=snakemake.input.symbols,
        manifest=snakemake.input.manifest,
        model_dir=snakemake.input.model,
        knobs=dict(snakemake.params.knobs),
        cache_dir=locations.cache_dir(),
        out=snakemake.output[0],
        threads=snakemake.params.embed_threads,
    )
