from pathlib import Path

from crmatrix.pipeline import jobs
from crmatrix.stages import plot_transitions

with jobs.job(snakemake.log[0], snakemake.output):
    plot_transitions.run(
        stats=snakemake.input.stats,
        out=Path(snakemake.output.svg).with_suffix(""),
        system=snakemake.wildcards.system,
        dataset=snakemake.wildcards.dataset,
        runtime=snakemake.params.runtime,
    )
