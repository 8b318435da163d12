from pathlib import Path

from crmatrix.pipeline import jobs
from crmatrix.stages import plot_arms

with jobs.job(snakemake.log[0], snakemake.output):
    plot_arms.run(
        stats=snakemake.input.stats,
        out=Path(snakemake.output.svg).with_suffix(""),
        system=snakemake.wildcards.system,
        dataset=snakemake.wildcards.dataset,
        models=dict(snakemake.params.models),
        runtime=snakemake.params.runtime,
    )
