from crmatrix.pipeline import jobs, locations
from crmatrix.stages import derive_split

with jobs.job(snakemake.log[0], snakemake.output):
    derive_split.run(
        file=snakemake.input.file,
        fmt=snakemake.params.format,
        split=snakemake.params.split,
        corpus_name=snakemake.params.corpus,
        manifest=snakemake.input.manifest,
        symbols=snakemake.input.symbols,
        graph_file=snakemake.input.graph,
        index_dir=snakemake.input.index,
        model=snakemake.input.model,
        knobs=dict(snakemake.params.knobs),
        cache_dir=locations.cache_dir(),
        out=snakemake.output.tasks,
        qrels=snakemake.output.qrels,
        threads=snakemake.params.embed_threads,
        summary=snakemake.output.summary,
    )
