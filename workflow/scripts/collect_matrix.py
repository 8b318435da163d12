from crmatrix import jobs, pipeline

with jobs.job(snakemake.log[0], snakemake.output):
    pipeline.collect_matrix(
        snakemake.input,
        snakemake.params.baseline_arm,
        snakemake.params.headline_method,
        snakemake.params.arm_order,
        dict(snakemake.params.archetypes),
        snakemake.output.json,
        snakemake.output.md,
    )
