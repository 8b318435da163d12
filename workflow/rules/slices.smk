# A target per dataset, per corpus and per arm (crmatrix.pipeline.slices): `snakemake dataset_requests`
# builds that dataset's runs and a phase matrix of those runs alone, under
# results/matrix/slices/<slice>/ (the matrix of `all` stays whole). Nothing else runs.


localrules:
    collect_slice_matrix,
    collect_slice_callgraph,


# The same aggregation as collect_matrix, over the slice's cells; its parameters are the
# slice's share of the matrix's (archetypes, splits and pools of its datasets, the correction family
# narrowed to its arms), so an edit elsewhere in the config re-runs no slice it does not touch.
use rule collect_matrix as collect_slice_matrix with:
    input:
        cells=lambda wc: [
            PATHS.file("cell", dataset=d, system=s, arm=a)
            for d, s, a in SLICES[wc.slice]["cells"]
        ],
        summaries=lambda wc: PLAN.summaries(
            crslices.retrieval_datasets(MATRIX, SLICES[wc.slice])
        ),
    output:
        json=layout("slice_matrix", ext="json"),
        md=layout("slice_matrix", ext="md"),
    log:
        "logs/collect_slice_matrix/{slice}.log",
    wildcard_constraints:
        slice=one_of(n for n, s in SLICES.items() if s["cells"]),
    params:
        arm_order=lambda wc: crslices.arms(MATRIX, SLICES[wc.slice]),
        archetypes=lambda wc: {
            d: MATRIX.datasets[d].archetype
            for d in crslices.datasets(SLICES[wc.slice])
        },
        pooled_as=lambda wc: {
            d: MATRIX.datasets[d].pooled_as
            for d in crslices.datasets(SLICES[wc.slice])
            if MATRIX.datasets[d].pooled_as
        },
        splits=lambda wc: {
            d: DATASET_SPLITS[d]
            for d in crslices.datasets(SLICES[wc.slice])
            if d in DATASET_SPLITS
        },
        comparisons=lambda wc: (
            None
            if MATRIX.comparisons is None
            else [
                a
                for a in MATRIX.comparisons
                if a in crslices.arms(MATRIX, SLICES[wc.slice])
            ]
        ),
        summary_datasets=lambda wc: crslices.retrieval_datasets(
            MATRIX, SLICES[wc.slice]
        ),


rule collect_slice_callgraph:
    input:
        lambda wc: [
            PATHS.file("callgraph", dataset=d, system=s)
            for d, s in SLICES[wc.slice]["calls"]
        ],
    output:
        json=layout("slice_callgraph", ext="json"),
        md=layout("slice_callgraph", ext="md"),
    log:
        "logs/collect_slice_callgraph/{slice}.log",
    wildcard_constraints:
        slice=one_of(n for n, s in SLICES.items() if s["calls"]),
    conda:
        "../../envs/crmatrix.yaml"
    threads: 1
    resources:
        mem_mb=1024,
        runtime=10,
    params:
        code=code("collect_callgraph"),
    script:
        "../scripts/collect_callgraph.py"


for _name in SLICES:

    rule:
        name:
            _name
        input:
            crslices.targets(_name, SLICES[_name]),
        localrule: True
