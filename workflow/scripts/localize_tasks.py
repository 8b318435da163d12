from crmatrix.pipeline import jobs
from crmatrix.stages import localize_tasks

with jobs.job(snakemake.log[0], snakemake.output):
    localize_tasks.run(
        file=snakemake.input.get("file"),
        repository=snakemake.input.repository,
        store=snakemake.input.store,
        corpus=snakemake.params.corpus,
        repo=snakemake.params.repo,
        level=snakemake.params.level,
        tasks=snakemake.params.tasks,
        out=snakemake.output.tasks,
        qrels=snakemake.output.qrels,
        summary=snakemake.output.summary,
        options=snakemake.params.history,
    )
