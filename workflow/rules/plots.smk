# The charts: the rows' charts, one job per system; one job per chart of a few arms (per system
# and arm, per system and sweep), so an added arm leaves the others be; one for the heatmap, one
# for both latency charts; the Vega runtime their HTML pages load, and one page with all of them
# and the matrix's tables. Each SVG goes into `snakemake --report`
# with its caption (workflow/report/<kind>.rst).
#
# What each family of charts draws from is its rule's input alone: the phase matrix
# (MATRIX_STATS, common.smk) for a chart of every arm, the cells of its own arms for a chart of a
# few, the runs for latency and the systems compared; so a chart is re-drawn when, and only when,
# what it draws changed (or its own code: `code()`).


# Local rules: seconds each, over small JSON files, with nothing to gain from a queue.
localrules:
    plot_forest,
    plot_sweep,
    plot_heatmap,
    plot_latency,
    plot_leaderboard,
    plot_versus,
    plot_costs,
    plot_runtime,
    plot_gallery,


# Each row's two charts (its arms, its queries' transitions), one job per system: they all read
# the phase matrix, so they are drawn again together, and one job starts Python and the Vega
# renderer once for all of them (crmatrix.stages.plot_rows). A job's outputs are its system's
# datasets, so systems that run on different datasets (their `datasets:`) get a rule per set:
# plot_rows for the systems on every dataset, plot_rows_N for each other set; a system that runs
# the baseline arm alone has no transitions to draw, so it gets a rule of its own too.
for _n, (_datasets, _systems, _kinds) in enumerate(ROW_CHART_GROUPS):

    rule:
        name:
            "plot_rows" if _n == 0 else f"plot_rows_{_n}"
        input:
            # every row of {system}: each arm's metric, its interval, which arm it repeats, and
            # each query's ranks against the baseline's
            stats=MATRIX_STATS,
        output:
            *(
                out
                for d in _datasets
                for kind in _kinds
                for out in (
                    chart_report(f"{kind}/{{system}}/{d}"),
                    layout("chart", stem=f"{kind}/{{system}}/{d}", ext="png"),
                    layout("chart", stem=f"{kind}/{{system}}/{d}", ext="html"),
                )
            ),
        log:
            "logs/plot_rows/{system}.log",
        wildcard_constraints:
            system=one_of(_systems),
        # local, as the other charts (localrules above), plot_rows_N included
        localrule: True
        conda:
            "../../envs/crmatrix.yaml"
        # a process per thread, each drawing its share of the datasets (the renderer draws one
        # chart at a time per process); Snakemake gives it no more than --cores
        threads: min(len(_datasets), PLOT_ROW_THREADS)
        resources:
            # each process its own renderer
            mem_mb=lambda wc, threads: 512 + 512 * threads,
            runtime=10,
        params:
            code=code("plot_rows"),
            captions=chart_captions(*_kinds),
            datasets=list(_datasets),
            kinds=list(_kinds),
            models=by(PLAN.chart_models, "system"),
            runtime=PLOT_RUNTIME,
        script:
            "../scripts/plot_rows.py"


rule plot_forest:
    input:
        # {arm} against the baseline on every dataset of {system}, and their pools: their cells
        cells=lambda wc: PLAN.system_cells(wc.system, [wc.arm]),
    output:
        svg=chart_report("forest/{system}/{arm}"),
        png=layout("chart", stem="forest/{system}/{arm}", ext="png"),
        html=layout("chart", stem="forest/{system}/{arm}", ext="html"),
    log:
        "logs/plot_forest/{system}/{arm}.log",
    wildcard_constraints:
        system=one_of(SYSTEMS),
        arm=one_of(a for a in MATRIX.arms if a != BASELINE),
    conda:
        "../../envs/crmatrix.yaml"
    threads: 1
    resources:
        mem_mb=1024,
        runtime=10,
    params:
        code=code("plot_forest"),
        captions=chart_captions("forest"),
        # one job per arm and system (the seed matrix's 28): a light job, its plotting imported once
        args=job_args(
            baseline_arm=BASELINE, splits=DATASET_SPLITS, runtime=PLOT_RUNTIME
        ),
        files=job_files,
    shell:
        light("plot_forest")


rule plot_sweep:
    input:
        # the cells of the sweep's arms and the baseline on every dataset of {system}
        cells=lambda wc: PLAN.system_cells(
            wc.system, [c["arm"] for c in MATRIX.sweeps[wc.sweep]["cells"]]
        ),
    output:
        svg=chart_report("sweep/{system}/{sweep}"),
        png=layout("chart", stem="sweep/{system}/{sweep}", ext="png"),
        html=layout("chart", stem="sweep/{system}/{sweep}", ext="html"),
    log:
        "logs/plot_sweep/{system}/{sweep}.log",
    wildcard_constraints:
        system=one_of(SYSTEMS),
        sweep=one_of(MATRIX.sweeps),
    conda:
        "../../envs/crmatrix.yaml"
    threads: 1
    resources:
        mem_mb=1024,
        runtime=10,
    params:
        code=code("plot_sweep"),
        captions=chart_captions("sweep"),
        grid=lambda wc: MATRIX.sweeps[wc.sweep],
        baseline_arm=BASELINE,
        runtime=PLOT_RUNTIME,
    script:
        "../scripts/plot_sweep.py"


rule plot_heatmap:
    input:
        # the whole matrix: its stars are Holm-corrected across each row's arms
        stats=MATRIX_STATS,
    output:
        svg=chart_report("heatmap"),
        png=layout("chart", stem="heatmap", ext="png"),
        html=layout("chart", stem="heatmap", ext="html"),
    log:
        "logs/plot_heatmap.log",
    conda:
        "../../envs/crmatrix.yaml"
    threads: 1
    resources:
        mem_mb=1024,
        runtime=10,
    params:
        code=code("plot_heatmap"),
        captions=chart_captions("heatmap"),
        runtime=PLOT_RUNTIME,
    script:
        "../scripts/plot_heatmap.py"


# The latency charts and quality against cost per model: each reads every run, so one job reads them once.
rule plot_latency:
    input:
        # every run's times (the matrix leaves latency out on purpose), and its headline metric and method
        times=PLAN.times_files(),
        stats=MATRIX_STATS,
    output:
        latency=chart_report("latency"),
        latency_png=layout("chart", stem="latency", ext="png"),
        latency_html=layout("chart", stem="latency", ext="html"),
        quality=chart_report("quality-latency"),
        quality_png=layout("chart", stem="quality-latency", ext="png"),
        quality_html=layout("chart", stem="quality-latency", ext="html"),
        models=chart_report("models"),
        models_png=layout("chart", stem="models", ext="png"),
        models_html=layout("chart", stem="models", ext="html"),
    log:
        "logs/plot_latency.log",
    conda:
        "../../envs/crmatrix.yaml"
    threads: 1
    resources:
        mem_mb=2048,
        runtime=10,
    params:
        code=code("plot_latency"),
        captions=chart_captions("latency", "quality-latency", "models"),
        models={s: PLAN.chart_models(s) for s in SYSTEMS},
        runtime=PLOT_RUNTIME,
    script:
        "../scripts/plot_latency.py"


# Systems compared (the config's reference_system, default the builtin), from the baseline
# arm's runs: the leaderboard of every system, each system's forest against the reference
# (their two systems' runs alone), and costs and failures per system (one job, runs read once).
rule plot_leaderboard:
    input:
        # every system on every dataset, for its score and its pooled Δ against the reference
        runs=PLAN.baseline_runs(SYSTEMS),
    output:
        svg=chart_report("leaderboard"),
        png=layout("chart", stem="leaderboard", ext="png"),
        html=layout("chart", stem="leaderboard", ext="html"),
    log:
        "logs/plot_leaderboard.log",
    conda:
        "../../envs/crmatrix.yaml"
    threads: 1
    resources:
        mem_mb=2048,
        runtime=10,
    params:
        code=code("plot_leaderboard"),
        captions=chart_captions("leaderboard"),
        reference=MATRIX.reference_system,
        headline_method=MATRIX.headline_method,
        runtime=PLOT_RUNTIME,
    script:
        "../scripts/plot_leaderboard.py"


rule plot_versus:
    input:
        # {system} and the reference system on every dataset: their runs alone
        runs=lambda wc: PLAN.baseline_runs([MATRIX.reference_system, wc.system]),
    output:
        svg=chart_report("versus/{system}"),
        png=layout("chart", stem="versus/{system}", ext="png"),
        html=layout("chart", stem="versus/{system}", ext="html"),
    log:
        "logs/plot_versus/{system}.log",
    wildcard_constraints:
        system=one_of(s for s in SYSTEMS if s != MATRIX.reference_system),
    conda:
        "../../envs/crmatrix.yaml"
    threads: 1
    resources:
        mem_mb=1024,
        runtime=10,
    params:
        code=code("plot_versus"),
        captions=chart_captions("versus"),
        reference=MATRIX.reference_system,
        headline_method=MATRIX.headline_method,
        runtime=PLOT_RUNTIME,
    script:
        "../scripts/plot_versus.py"


rule plot_costs:
    input:
        # every system on every dataset (latency, tokens and failures per query; the leaderboard's order)
        runs=PLAN.baseline_runs(SYSTEMS),
    output:
        costs=chart_report("costs"),
        costs_png=layout("chart", stem="costs", ext="png"),
        costs_html=layout("chart", stem="costs", ext="html"),
        failures=chart_report("failures"),
        failures_png=layout("chart", stem="failures", ext="png"),
        failures_html=layout("chart", stem="failures", ext="html"),
    log:
        "logs/plot_costs.log",
    conda:
        "../../envs/crmatrix.yaml"
    threads: 1
    resources:
        mem_mb=2048,
        runtime=10,
    params:
        code=code("plot_costs"),
        captions=chart_captions("costs", "failures"),
        reference=MATRIX.reference_system,
        headline_method=MATRIX.headline_method,
        runtime=PLOT_RUNTIME,
    script:
        "../scripts/plot_costs.py"


# Vega, Vega-Lite and Vega-Embed in one script, for every chart's HTML: a job of its own, so
# it is written once (it takes seconds to bundle) and again only for other versions of them.
rule plot_runtime:
    output:
        PLOT_RUNTIME,
    log:
        "logs/plot_runtime.log",
    conda:
        "../../envs/crmatrix.yaml"
    threads: 1
    resources:
        mem_mb=1024,
        runtime=10,
    params:
        code=code("plot_runtime"),
        versions=plot_runtime.versions(),
    script:
        "../scripts/plot_runtime.py"


rule plot_gallery:
    input:
        svgs=PLAN.plot_outputs("svg"),
        matrix=layout("matrix", ext="json"),
        md=layout("matrix", ext="md"),
    output:
        report(
            layout("gallery"),
            caption="../report/gallery.rst",
            category="1. Phase matrix",
            labels={"page": "tables and every chart"},
        ),
    log:
        "logs/plot_gallery.log",
    conda:
        "../../envs/crmatrix.yaml"
    threads: 1
    resources:
        mem_mb=1024,
        runtime=10,
    params:
        code=code("plot_gallery"),
    script:
        "../scripts/plot_gallery.py"
