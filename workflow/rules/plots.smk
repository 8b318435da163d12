# Every chart of the phase matrix, and one page with all of them and the matrix's tables.
# Each SVG goes into `snakemake --report` with its caption (workflow/report/<kind>.rst).


# A local rule: one job at the end, drawing from the matrix, with nothing to gain from a queue.
localrules:
    plot_matrix,


rule plot_matrix:
    input:
        matrix="results/matrix/phase-matrix.json",
        md="results/matrix/phase-matrix.md",
        runs=run_files(),
    output:
        gallery=report(
            "results/plots/index.html",
            caption="../report/gallery.rst",
            category="1. Phase matrix",
            labels={"page": "tables and every chart"},
        ),
        svg=plot_reports(),
        png=plot_outputs("png"),
        html=plot_outputs("html"),
    log:
        "logs/plot_matrix.log",
    conda:
        "../../envs/crmatrix.yaml"
    threads: 1
    resources:
        mem_mb=2048,
        runtime=30,
    params:
        code=code("plot_matrix"),
        captions=plot_names.CAPTIONS,
        sweeps=SWEEPS,
    script:
        "../scripts/plot_matrix.py"
