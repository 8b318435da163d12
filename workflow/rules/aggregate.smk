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
    conda:
        "../../envs/crmatrix.yaml"
    log:
        "logs/collect_matrix.log",
    script:
        "../scripts/collect_matrix.py"
