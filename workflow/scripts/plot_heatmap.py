from pathlib import Path

from crmatrix.pipeline import jobs
from crmatrix.stages import plot_heatmap

with jobs.job(snakemake.log[0], snakemake.output):
    plot_heatmap.run(
        stats=snakemake.input.stats,
        out=Path(snakemake.output.svg).with_suffix(""),
        runtime=snakemake.params.runtime,
    )
