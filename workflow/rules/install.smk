# A system's own virtual environment, keyed by what it holds (crmatrix.systems.install). A local rule:
# it reaches the package index or the code host, which cluster nodes may not. Its parameter is
# what it installs; the git URL comes by environment (install.export_sources), so the same
# commit found elsewhere re-runs nothing, and a constraints file is an input.
localrules:
    install_system,


rule install_system:
    input:
        unpack(by(PLAN.install_inputs, "system")),
    output:
        directory(layout("venv")),
    log:
        "logs/install_system/{system}/{install_key}.log",
    benchmark:
        "logs/benchmarks/install_system/{system}/{install_key}.tsv"
    wildcard_constraints:
        system=one_of(s for s, c in MATRIX.systems.items() if c.venv),
    conda:
        "../../envs/crmatrix.yaml"
    threads: 1
    resources:
        mem_mb=2048,
        runtime=30,
    params:
        code=code("install_system"),
        install=lambda wc: install.spec(MATRIX.systems[wc.system].spec.install),
    script:
        "../scripts/install_system.py"
