rule collect_matrix:
    input:
        run_files(),
    output:
        json="results/matrix/phase-matrix.json",
        md="results/matrix/phase-matrix.md",
    params:
        code=code("collect_matrix"),
        baseline_arm=CFG["baseline_arm"],
        headline_method=CFG["headline_method"],
        arm_order=list(CFG["arms"]),
        archetypes={d: c.get("archetype") for d, c in CFG["datasets"].items()},
        splits={d: c["split"] for d, c in CFG["datasets"].items() if c.get("split")},
        comparisons=CFG.get("comparisons"),
    conda:
        "../../envs/crmatrix.yaml"
    log:
        "logs/collect_matrix.log",
    script:
        "../scripts/collect_matrix.py"


rule collect_callgraph:
    input:
        callgraph_files(),
    output:
        json="results/matrix/callgraph.json",
        md="results/matrix/callgraph.md",
    params:
        code=code("collect_callgraph"),
    conda:
        "../../envs/crmatrix.yaml"
    log:
        "logs/collect_callgraph.log",
    script:
        "../scripts/collect_callgraph.py"
