from pathlib import Path

from crmatrix.pipeline import jobs
from crmatrix.stages import plot_sweep

with jobs.job(snakemake.log[0], snakemake.output):
    plot_sweep.run(
        stats=snakemake.input.stats,
        out=Path(snakemake.output.svg).with_suffix(""),
        system=snakemake.wildcards.system,
        sweep_name=snakemake.wildcards.sweep,
        grid=dict(snakemake.params.grid),
        runtime=snakemake.params.runtime,
    )
