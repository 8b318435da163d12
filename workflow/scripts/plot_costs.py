from pathlib import Path

from crmatrix.pipeline import jobs
from crmatrix.stages import plot_costs

with jobs.job(snakemake.log[0], snakemake.output):
    plot_costs.run(
        runs=snakemake.input.runs,
        out_dir=Path(snakemake.output.costs).parent,
        reference=snakemake.params.reference,
        headline_method=snakemake.params.headline_method,
        runtime=snakemake.params.runtime,
    )
