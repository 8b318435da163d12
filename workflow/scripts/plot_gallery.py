from pathlib import Path

from crmatrix.pipeline import jobs
from crmatrix.stages import plot_gallery

with jobs.job(snakemake.log[0], snakemake.output):
    plot_gallery.run(
        svgs=snakemake.input.svgs,
        charts_dir=Path(snakemake.output[0]).parent,
        matrix=snakemake.input.matrix,
        matrix_md=snakemake.input.md,
        out=snakemake.output[0],
    )
