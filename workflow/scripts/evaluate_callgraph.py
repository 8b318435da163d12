from crmatrix.pipeline import jobs
from crmatrix.stages import evaluate_callgraph

with jobs.job(snakemake.log[0], snakemake.output):
    evaluate_callgraph.run(
        tasks=snakemake.input.tasks,
        symbols=snakemake.input.symbols,
        manifest=snakemake.input.manifest,
        tree=snakemake.input.tree,
        graph=snakemake.input.get("graph"),
        out=snakemake.output[0],
        dataset=snakemake.wildcards.dataset,
        system=snakemake.wildcards.system,
        system_conf=dict(snakemake.params.system),
        env=dict(snakemake.params.env),
        knobs=dict(snakemake.params.knobs),
    )
