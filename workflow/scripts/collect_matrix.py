from crmatrix.pipeline import jobs
from crmatrix.stages import collect_matrix

with jobs.job(snakemake.log[0], snakemake.output):
    collect_matrix.run(
        snakemake.input.cells,
        snakemake.params.baseline_arm,
        snakemake.params.headline_method,
        snakemake.params.arm_order,
        dict(snakemake.params.archetypes),
        snakemake.output.json,
        snakemake.output.md,
        dict(snakemake.params.splits),
        snakemake.params.comparisons,
        summaries=dict(zip(snakemake.params.summary_datasets, snakemake.input.summaries, strict=True)),
        notes=dict(snakemake.params.notes),
        reference=snakemake.params.reference,
        pooled_as=dict(snakemake.params.pooled_as),
    )
