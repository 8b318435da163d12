from crmatrix.evaluation.cell import CellJob
from crmatrix.pipeline import jobs, locations
from crmatrix.stages import evaluate_arm

with jobs.job(snakemake.log[0], snakemake.output):
    evaluate_arm.run(
        CellJob(  # as its plan names it (crmatrix.config.plan.Plan.cell)
            snakemake.wildcards.dataset,
            snakemake.wildcards.system,
            snakemake.wildcards.arm,
            inputs=dict(snakemake.input.items()),
            params=dict(snakemake.params.cell),
            outputs={"run": snakemake.output.run, "trec_dir": snakemake.output.trec},
        ),
        cache_dir=locations.cache_dir(),
        tracking=snakemake.output.tracking,
        threads=snakemake.params.embed_threads,
    )
