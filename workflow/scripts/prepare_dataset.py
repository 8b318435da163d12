from crmatrix.pipeline import jobs
from crmatrix.stages import prepare_dataset

with jobs.job(snakemake.log[0], snakemake.output):
    prepare_dataset.run(
        snakemake.input.file,
        snakemake.params.format,
        snakemake.params.corpus,
        snakemake.input.manifest,
        snakemake.input.symbols,
        snakemake.output.tasks,
        snakemake.output.qrels,
        snakemake.output.summary,
        split=snakemake.params.split["split"],
        seed=snakemake.params.split["seed"],
        sample=snakemake.params.sample,
        tree=snakemake.input.get("tree"),
    )
