from pathlib import Path

from crmatrix.pipeline import jobs
from crmatrix.stages import plot_rows

with jobs.job(snakemake.log[0], snakemake.output):
    plot_rows.run(
        stats=snakemake.input.stats,
        # results/plots/arms/<system>/<dataset>.svg
        out_dir=Path(snakemake.output[0]).parents[2],
        system=snakemake.wildcards.system,
        datasets=snakemake.params.datasets,
        kinds=snakemake.params.kinds,
        models=dict(snakemake.params.models),
        runtime=snakemake.params.runtime,
        workers=snakemake.threads,
    )
