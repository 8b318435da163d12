from crmatrix.pipeline.warm import client

client.hand_over()  # a local run's warm server runs the job, its modules imported already

from crmatrix.pipeline import jobs, shell_job
from crmatrix.stages import cell_stats

job = shell_job.read()
with jobs.job(job.log, job.files):
    cell_stats.run(
        job.input["run"],
        job.input.get("base"),
        job.params["headline_method"],
        job.params["format"],
        job.output["cell"],
        job.output["times"],
    )
