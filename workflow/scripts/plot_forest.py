from pathlib import Path

from crmatrix.pipeline import jobs
from crmatrix.stages import plot_forest

with jobs.job(snakemake.log[0], snakemake.output):
    plot_forest.run(
        stats=snakemake.input.stats,
        out=Path(snakemake.output.svg).with_suffix(""),
        system=snakemake.wildcards.system,
        arm=snakemake.wildcards.arm,
        runtime=snakemake.params.runtime,
    )
