from crmatrix.pipeline import jobs
from crmatrix.stages import track_runs

with jobs.job(snakemake.log[0], snakemake.output):
    track_runs.run(
        runs=snakemake.input.runs,
        trec_dirs=snakemake.input.trec,
        log_dir=snakemake.params.log_dir,
        options=dict(snakemake.params.trackers),
    )
