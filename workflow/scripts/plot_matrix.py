from pathlib import Path

from crmatrix.pipeline import jobs
from crmatrix.stages import plot_matrix

with jobs.job(snakemake.log[0], snakemake.output):
    plot_matrix.run(
        matrix=snakemake.input.matrix,
        matrix_md=snakemake.input.md,
        runs=snakemake.input.runs,
        out_dir=Path(snakemake.output.gallery).parent,
        gallery_out=snakemake.output.gallery,
        sweeps=snakemake.params.sweeps,
    )
