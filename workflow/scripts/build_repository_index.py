from crmatrix.pipeline import jobs, locations
from crmatrix.stages import build_repository_index

with jobs.job(snakemake.log[0], snakemake.output):
    build_repository_index.run(
        repository=snakemake.input.repository,
        store=snakemake.input.store,
        model_dir=snakemake.input.get("model"),  # none: the system ranks by no vectors
        knobs=dict(snakemake.params.knobs),
        cache_dir=locations.cache_dir(),
        out=snakemake.output[0],
        files=snakemake.params.files,
        threads=snakemake.params.embed_threads,
    )
