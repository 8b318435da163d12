"""Every chart of a matrix and its runs, drawn under the names `names.stems` gives them."""

from __future__ import annotations

import altair as alt

from crmatrix.plots import arms, forest, frames, heatmap, latency, sweep, transitions


def charts(matrix: dict, runs: list[dict], sweeps: dict[str, dict] | None = None) -> dict[str, alt.TopLevelMixin]:
    """Every chart of the matrix by stem; `sweeps`: the config's grids (`crmatrix.pipeline.sweeps.grids`).
    Refuses runs of one dataset made from other inputs."""
    frames.check_comparable(runs)
    metric, base, order = matrix["metric"], matrix["baseline_arm"], matrix["arms"]
    models = frames.arm_models(runs)
    out: dict[str, alt.TopLevelMixin] = {}
    for r in matrix["rows"]:
        key = f"{r['system']}/{r['dataset']}"
        out[f"arms/{key}"] = arms.chart(frames.arms(r, order, models, metric), dataset=r["dataset"],
                                        system=r["system"], method=r["method"], metric=metric, n=r["n"], baseline=base)
        out[f"transitions/{key}"] = transitions.chart(frames.transitions(r, order), dataset=r["dataset"],
                                                      system=r["system"], method=r["method"], n=r["n"],
                                                      baseline=base, arms=order)
    for e in matrix["pooled"]:
        overall = next((g for g in e["groups"] if g["kind"] == "overall"), None)
        verdict = "" if overall is None else "{positive} positive / {negative} negative / {inert} inert".format(
            **overall["verdict"])
        out[f"forest/{e['system']}/{e['arm']}"] = forest.chart(
            frames.forest(e), system=e["system"], arm=e["arm"], baseline=base, metric=metric,
            overall=overall and overall["pooled"], verdict=verdict)
    for name, grid in (sweeps or {}).items():
        cells = {c["arm"] for c in grid["cells"]}
        for system in dict.fromkeys(r["system"] for r in matrix["rows"] if cells & set(r["cells"])):
            method = next(r["method"] for r in matrix["rows"] if r["system"] == system)
            out[f"sweep/{system}/{name}"] = sweep.chart(frames.sweep(matrix, grid, system), sweep=name, system=system,
                                                        grid=grid, metric=metric, method=method, baseline=base)
    datasets = len({r["dataset"] for r in matrix["rows"]})
    out["heatmap"] = heatmap.chart(frames.heatmap(matrix), metric=metric, baseline=base, arms=order)
    out["latency"] = latency.chart(frames.latency(runs), arms=order, datasets=datasets)
    headline = matrix["rows"][0]["method"] if matrix["rows"] else ""
    out["quality-latency"] = latency.quality_chart(frames.quality(runs, metric), metric=metric, datasets=datasets,
                                                   headline=headline)
    return out
