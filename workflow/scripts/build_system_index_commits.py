from crmatrix.pipeline import jobs
from crmatrix.stages import build_system_index

with jobs.job(snakemake.log[0], snakemake.output):
    build_system_index.run_commits(
        system=snakemake.wildcards.system,
        system_conf=dict(snakemake.params.system),
        repository=snakemake.input.repository,
        env=dict(snakemake.params.env),
        out=snakemake.output[0],
        cache=snakemake.params.cache,
        home_dir=snakemake.params.home,
        venv=snakemake.input.get("venv"),
        models=snakemake.input.get("models"),
    )
