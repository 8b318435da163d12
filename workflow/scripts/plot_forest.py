from crmatrix.pipeline.warm import client

client.hand_over()  # a local run's warm server runs the job, its modules imported already

from pathlib import Path

from crmatrix.pipeline import jobs, shell_job
from crmatrix.stages import plot_forest

job = shell_job.read()
with jobs.job(job.log, job.files):
    plot_forest.run(
        cells=job.input["cells"],
        out=Path(job.output["svg"]).with_suffix(""),
        system=job.wildcards["system"],
        arm=job.wildcards["arm"],
        baseline_arm=job.params["baseline_arm"],
        splits=job.params["splits"],
        runtime=job.params["runtime"],
    )
