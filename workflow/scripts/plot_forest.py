from pathlib import Path

from crmatrix.pipeline import jobs
from crmatrix.stages import plot_forest

with jobs.job(snakemake.log[0], snakemake.output):
    plot_forest.run(
        cells=snakemake.input.cells,
        out=Path(snakemake.output.svg).with_suffix(""),
        system=snakemake.wildcards.system,
        arm=snakemake.wildcards.arm,
        baseline_arm=snakemake.params.baseline_arm,
        splits=dict(snakemake.params.splits),
        runtime=snakemake.params.runtime,
    )
