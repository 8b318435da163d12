from crmatrix.pipeline import jobs
from crmatrix.stages import track_run

with jobs.job(snakemake.log[0], snakemake.output):
    track_run.run(
        run_path=snakemake.input.run,
        trec_dir=snakemake.input.trec,
        options=dict(snakemake.params.trackers),
        out=snakemake.output[0],
    )
