from crmatrix.pipeline import jobs
from crmatrix.stages import write_corpus

with jobs.job(snakemake.log[0], snakemake.output):
    write_corpus.run(
        snakemake.wildcards.corpus,
        snakemake.params.corpus,
        snakemake.input.file,
        snakemake.output.tree,
        snakemake.output.manifest,
    )
