from crmatrix.pipeline import jobs
from crmatrix.stages import gate_candidates

with jobs.job(snakemake.log[0], snakemake.output):
    gate_candidates.run(
        snakemake.input,
        dict(snakemake.params.pairs),
        snakemake.output.json,
        snakemake.output.txt,
    )
