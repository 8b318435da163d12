from crmatrix.pipeline import jobs, locations
from crmatrix.stages import evaluate_arm

with jobs.job(snakemake.log[0], snakemake.output):
    evaluate_arm.run(
        **dict(snakemake.input.items()),  # as its plan names them (experiment.cell)
        cache_dir=locations.cache_dir(),
        out=snakemake.output.run,
        trec_dir=snakemake.output.trec,
        tracking=snakemake.output.tracking,
        dataset=snakemake.wildcards.dataset,
        system=snakemake.wildcards.system,
        system_conf=dict(snakemake.params.system_conf),
        arm=snakemake.wildcards.arm,
        env=dict(snakemake.params.env),
        top_k=snakemake.params.top_k,
        split=dict(snakemake.params.split),
        home_dir=snakemake.params.home_dir,
        threads=snakemake.params.embed_threads,
    )
