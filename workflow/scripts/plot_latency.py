from pathlib import Path

from crmatrix.pipeline import jobs
from crmatrix.stages import plot_latency

with jobs.job(snakemake.log[0], snakemake.output):
    plot_latency.run(
        times=snakemake.input.times,
        stats=snakemake.input.stats,
        out_dir=Path(snakemake.output.latency).parent,
        models={s: dict(m) for s, m in snakemake.params.models.items()},
        runtime=snakemake.params.runtime,
    )
