from crmatrix.pipeline.warm import client

client.hand_over()  # a local run's warm server runs the job, its modules imported already

from crmatrix.evaluation.cell import CellJob
from crmatrix.pipeline import jobs, locations, shell_job
from crmatrix.stages import evaluate_arm

job = shell_job.read()
with jobs.job(job.log, job.files):
    evaluate_arm.run(
        CellJob(  # as its plan names it (crmatrix.config.plan.Plan.cell)
            job.wildcards["dataset"],
            job.wildcards["system"],
            job.wildcards["arm"],
            inputs=job.input,
            params=job.params["cell"],
            outputs={"run": job.output["run"], "trec_dir": job.output["trec"]},
        ),
        cache_dir=locations.cache_dir(),
        tracking=job.output["tracking"],
        threads=job.params["embed_threads"],
    )
