from crmatrix.pipeline import jobs, locations
from crmatrix.stages import evaluate_arm

with jobs.job(snakemake.log[0], snakemake.output):
    evaluate_arm.run(
        tasks=snakemake.input.tasks,
        grep=snakemake.input.grep,
        symbols=snakemake.input.symbols,
        manifest=snakemake.input.manifest,
        tree=snakemake.input.tree,
        dataset_file=snakemake.input.dataset_file,
        index=snakemake.input.get("index"),
        model=snakemake.input.get("model"),
        query_vectors=snakemake.input.get("query_vectors"),
        graph=snakemake.input.get("graph"),
        cache_dir=locations.cache_dir(),
        out=snakemake.output.run,
        trec_dir=snakemake.output.trec,
        dataset=snakemake.wildcards.dataset,
        system=snakemake.wildcards.system,
        system_conf=dict(snakemake.params.system),
        arm=snakemake.wildcards.arm,
        env=dict(snakemake.params.env),
        top_k=snakemake.params.top_k,
        threads=snakemake.params.embed_threads,
        home_dir=snakemake.params.home,
        venv=snakemake.input.get("venv"),
        split=dict(snakemake.params.split),
    )
