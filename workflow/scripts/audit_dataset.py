from crmatrix.pipeline import jobs
from crmatrix.stages import audit_dataset

with jobs.job(snakemake.log[0], snakemake.output):
    audit_dataset.run(
        snakemake.input.tasks,
        snakemake.wildcards.dataset,
        snakemake.output.json,
        snakemake.output.md,
        snakemake.output.html,
        note=snakemake.params.note,
    )
