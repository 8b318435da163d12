from pathlib import Path

from crmatrix.pipeline import jobs
from crmatrix.stages import plot_versus

with jobs.job(snakemake.log[0], snakemake.output):
    plot_versus.run(
        runs=snakemake.input.runs,
        out=Path(snakemake.output.svg).with_suffix(""),
        system=snakemake.wildcards.system,
        reference=snakemake.params.reference,
        headline_method=snakemake.params.headline_method,
        runtime=snakemake.params.runtime,
    )
