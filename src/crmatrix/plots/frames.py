"""The tables the charts draw, from the matrix's statistics (`crmatrix.plots.sources`) and its runs.

Runs are only needed for what the matrix leaves out on purpose: search latency per arm and
method (it varies from run to run; the matrix holds only its leaderboard's, per system).
Which model an arm embeds with is the config's name for it, handed in by the workflow
(`models`: arm -> name, none for an arm that embeds nothing), since a run records the model
by its hash and source only.
"""

from __future__ import annotations

import pandas as pd

from crmatrix import CrmatrixError
from crmatrix.evaluation import metrics
from crmatrix.labels import dataset_label
from crmatrix.plots.sources import View
from crmatrix.results.pool import PoolEntry
from crmatrix.results.row import PlainRow, Row
from crmatrix.results.run import NAMED_NOTHING, OUTCOMES, QueryRow, Run, outcome
from crmatrix.results.times import RunTimes
from crmatrix.results.versus import Compared, Versus

NO_MODEL = "no model"


def check_comparable(runs: list[Run] | list[RunTimes]) -> None:
    """Refuse to draw runs of one dataset side by side unless they searched the same corpus
    (pin and content hash) with the same dataset file (sha256): a difference between them
    would be a difference between inputs, not between arms."""
    seen: dict[str, tuple[Run | RunTimes, tuple]] = {}
    for r in runs:
        prov = r.provenance
        key = (prov.corpus.pin, prov.corpus.content_hash, prov.dataset.sha256)
        first = seen.setdefault(r.dataset, (r, key))
        if first[1] != key:
            a, b = first[0], r
            raise CrmatrixError(
                f"plots: dataset {r.dataset!r}: runs {a.system}/{a.arm} and {b.system}/{b.arm} "
                f"were made from different inputs (corpus pin {_short(first[1][0])} content {first[1][1][:12]}, "
                f"dataset sha256 {first[1][2][:12]} vs corpus pin {_short(key[0])} content {key[1][:12]}, "
                f"dataset sha256 {key[2][:12]}); they cannot be drawn side by side: rerun them from one config")


def _short(pin: dict) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(pin.items()))


def arms(row: PlainRow, arm_order: tuple[str, ...], models: dict[str, str]) -> pd.DataFrame:
    """One line per arm of a row: the headline mean and its interval, the arm's model (`models`:
    arm -> the config's name of the model the row's system embeds with under it), and what an
    identical arm repeats."""
    return pd.DataFrame([{
        "arm": arm, "value": c.mean, "ci_low": c.ci_low, "ci_high": c.ci_high,
        "model": models.get(arm, NO_MODEL), "identical_to": c.identical_to or "",
        "mark": f"≡ {c.identical_to}" if c.identical_to else "",
    } for arm in arm_order if (c := row.cells.get(arm))])


def heatmap(view: View) -> pd.DataFrame:
    """One line per (row, compared arm) in column order: relative Δ, whether the corrected test
    is significant, and the text the cell shows."""
    out = []
    for r in view.rows:
        for arm in view.arms:
            c = r.cells.get(arm)
            if c is None or c.compared is None:
                continue
            same, p_holm = c.identical_to, c.corrected.p_holm
            sig = p_holm is not None and p_holm < view.alpha
            rel = c.compared.delta_rel
            text = f"≡ {same}" if same else ("Δ n/a" if rel is None else f"{rel:+.0%}") + ("*" if sig else "")
            label = dataset_label(r.dataset, view.notes.get(r.dataset))
            out.append({"row": f"{label} · {r.system} (n {r.n})", "arm": arm, "delta_rel": rel,
                        "delta_abs": c.compared.delta_abs, "p_holm": p_holm, "p": c.compared.p_randomization,
                        "significant": sig, "identical_to": same or "", "text": text})
    return pd.DataFrame(out, columns=["row", "arm", "delta_rel", "delta_abs", "p_holm", "p", "significant",
                                      "identical_to", "text"])


def forest(entry: PoolEntry, notes: dict[str, str]) -> pd.DataFrame:
    """One line per dataset and per pooled group of a (system, arm) pool, in drawing order:
    each language's datasets then its pool, the overall pool, then the structural splits.
    `notes`: the datasets' caveats (the matrix's), shown with their names."""
    studies = {s.dataset: s for s in entry.studies}
    out = []
    for g in entry.groups:
        if g.kind != "overall":
            for name in g.datasets:
                s = studies[name]
                same = f" (≡ {s.identical_to})" if s.identical_to else ""
                label = dataset_label(name, notes.get(name))
                out.append({"label": f"{label}{same}", "group": g.group, "kind": "dataset", "estimate": s.delta,
                            "ci_low": s.ci_low, "ci_high": s.ci_high, "n": s.n, "verdict": s.verdict})
        p, v = g.pooled, g.verdict
        i2 = "" if p is None or p.i2 is None else f", I² {p.i2:.0%}"
        label = f"{g.group} · pooled" + (f" (k {p.k}{i2})" if p else " (no variation)")
        out.append({"label": label, "group": g.group, "kind": "overall" if g.kind == "overall" else "pooled",
                    "estimate": p.estimate if p else 0.0, "ci_low": p.ci_low if p else 0.0,
                    "ci_high": p.ci_high if p else 0.0, "n": None,
                    "verdict": f"{v.positive} positive / {v.negative} negative / {v.inert} inert"})
    return pd.DataFrame(out)


def transitions(row: Row, arm_order: tuple[str, ...]) -> pd.DataFrame:
    """Every query of a row under each distinct compared arm: its first relevant rank under the
    baseline and under the arm (None = missed), counted per (baseline rank, arm rank)."""
    out = []
    for arm in arm_order:
        dec = row.decomposition.get(arm)
        if dec is None or row.cells[arm].identical_to:
            continue
        for direction in ("improved", "regressed", "unchanged"):
            for q in dec.by(direction):
                out.append({"arm": arm, "base_rank": q.base_rank, "arm_rank": q.arm_rank, "direction": direction})
    df = pd.DataFrame(out, columns=["arm", "base_rank", "arm_rank", "direction"])
    return (df.fillna({"base_rank": 0, "arm_rank": 0}).astype({"base_rank": int, "arm_rank": int})
            .groupby(["arm", "base_rank", "arm_rank", "direction"], as_index=False).size()
            .rename(columns={"size": "queries"}))


def latency(runs: list[RunTimes]) -> pd.DataFrame:
    """Search latency p50 and p95 per (system, method, arm) over the queries of all its datasets."""
    by: dict[tuple, list[float]] = {}
    for r in runs:
        for method, res in r.methods.items():
            by.setdefault((r.system, method, r.arm), []).extend(res.elapsed_ms)
    return pd.DataFrame([{"system": s, "method": m, "arm": a, "queries": len(ms), **{
        f"{k}_ms": v for k, v in metrics.latency(ms).items() if k in ("p50", "p95")}}
        for (s, m, a), ms in sorted(by.items())])


def quality(runs: list[RunTimes], metric: str, models: dict[str, dict[str, str]]) -> pd.DataFrame:
    """Per (system, method, arm): the metric's macro mean over datasets, the latency p50 over
    all their queries (the same p50 as `latency`) and the arm's model (`models`: system -> arm
    -> name)."""
    lat = latency(runs).set_index(["system", "method", "arm"])
    by: dict[tuple, list[float]] = {}
    for r in runs:
        for method, res in r.methods.items():
            if res.metrics.get(metric) is not None:
                by.setdefault((r.system, method, r.arm), []).append(res.metrics[metric])
    return pd.DataFrame([{"system": s, "method": m, "arm": a, "model": models.get(s, {}).get(a, NO_MODEL),
                          "value": sum(v) / len(v), "datasets": len(v), "p50_ms": float(lat.loc[(s, m, a), "p50_ms"])}
                         for (s, m, a), v in sorted(by.items())])


def sweep(view: View, grid: dict, system: str) -> pd.DataFrame:
    """One line per (dataset row of the system, cell of the sweep's grid): the cell's values on
    the axes (`x`, and `y` for a second axis), its headline metric and Δ against the baseline,
    and whether it is the row's best cell (every cell tied for best is)."""
    out = []
    for r in view.rows:
        if r.system != system:
            continue
        cells = [(c, r.cells[c["arm"]]) for c in grid["cells"] if c["arm"] in r.cells]
        best = max((m.mean for _, m in cells), default=None)
        for c, m in cells:
            out.append({"row": f"{r.dataset} (n {r.n})", "arm": c["arm"], "x": c["values"][0],
                        "y": c["values"][1] if len(c["values"]) > 1 else "", "value": m.mean,
                        "delta_abs": m.compared.delta_abs if m.compared else None, "best": m.mean == best,
                        "identical_to": m.identical_to or "", "text": f"{m.mean:.3f}"})
    return pd.DataFrame(out, columns=["row", "arm", "x", "y", "value", "delta_abs", "best", "identical_to", "text"])


def leaderboard(table: Compared) -> tuple[pd.DataFrame, list[str]]:
    """One line per (system, dataset) of a comparison of systems (`crmatrix.analysis.versus`):
    its headline metric with its interval, failures and answers naming nothing (of the corpus),
    the system named by its label (with its pooled Δ against the reference, and `not testable`
    when the paired test cannot judge it); and the labels in leaderboard order."""
    effects = {v.system: v for v in table.versus}
    labels = {}
    for s in table.systems:
        v = effects.get(s)
        labels[s] = f"{s} (reference)" if s == table.reference else (
            f"{s} (Δ {v.effect:+.3f}{'' if v.testable else ', not testable'})" if v and v.studies
            else f"{s} (no paired query)")
    columns = ["system", "dataset", "method", "value", "ci_low", "ci_high", "n", "failed", "empty", "unresolved"]
    return pd.DataFrame([{"system": labels[c.system], "dataset": c.dataset, "method": c.method, "value": c.mean,
                          "ci_low": c.ci_low, "ci_high": c.ci_high, "n": c.n, "failed": c.failed, "empty": c.empty,
                          "unresolved": c.unresolved} for c in table.scores], columns=columns
                        ), [labels[s] for s in table.systems]


def versus(entry: Versus) -> pd.DataFrame:
    """One line per dataset of a system against the reference, then the pooled Δ."""
    out = [{"label": f"{s.dataset} (n {s.n}" + (f", {s.left_out} left out)" if s.left_out else ")"),
            "kind": "dataset", "estimate": s.delta, "ci_low": s.ci_low, "ci_high": s.ci_high, "n": s.n,
            "p": s.p_randomization, "verdict": s.verdict} for s in entry.studies]
    p, v = entry.pooled, entry.verdict
    if p:
        i2 = "" if p.i2 is None else f", I² {p.i2:.0%}"
        out.append({"label": f"pooled (k {p.k}{i2})", "kind": "overall", "estimate": p.estimate,
                    "ci_low": p.ci_low, "ci_high": p.ci_high, "n": None, "p": None,
                    "verdict": f"{v.positive} positive / {v.negative} negative / {v.inert} inert"})
    return pd.DataFrame(out, columns=["label", "kind", "estimate", "ci_low", "ci_high", "n", "p", "verdict"])


def costs(by: dict[str, list[QueryRow]]) -> pd.DataFrame:
    """Per system, over the query rows `by` holds for it (its headline method's on every
    dataset): search latency p50 and p95, and the mean tokens per query an agent reads from it
    and from grep-and-read over the same queries (`crmatrix.evaluation.tokenbench`; absent from
    a run made without it)."""
    out = []
    for system, rows in sorted(by.items()):
        lat = metrics.latency([q.elapsed_ms for q in rows])
        grep = [q.grep_tokens for q in rows if q.grep_tokens is not None]
        out.append({"system": system, "queries": len(rows), "p50_ms": lat["p50"], "p95_ms": lat["p95"],
                    "system_tokens": sum(q.response_tokens for q in rows) / len(rows) if rows else 0.0,
                    "grep_tokens": sum(grep) / len(grep) if grep else None})
    return pd.DataFrame(out, columns=["system", "queries", "p50_ms", "p95_ms", "system_tokens", "grep_tokens"])


def failures(by: dict[str, list[QueryRow]]) -> pd.DataFrame:
    """Per system, the queries among the rows `by` holds for it that failed (one line per kind),
    and beside them those whose answer named nothing (`empty`) or nothing of the corpus
    (`unresolved`: one line each, its kind its outcome); a system with none has one line of
    kind `none` and 0. `count`: the line's queries; `queries`: the system's."""
    out = []
    for system, rows in sorted(by.items()):
        kinds: dict[tuple[str, str], int] = {}
        for q in rows:
            o = outcome(q)
            if o in ("failed", *NAMED_NOTHING):
                key = (o, q.failure or o)
                kinds[key] = kinds.get(key, 0) + 1
        totals = {o: sum(n for (of, _), n in kinds.items() if of == o) for o in ("failed", *NAMED_NOTHING)}
        label = f"of {len(rows)}: " + ", ".join(f"{n} {o}" for o, n in totals.items() if n or o == "failed")
        lines = sorted(kinds.items(), key=lambda kn: (OUTCOMES.index(kn[0][0]), kn[0][1])) or [(("none", "none"), 0)]
        for (o, kind), n in lines:
            out.append({"system": system, "outcome": o, "kind": kind, "count": n, "queries": len(rows),
                        "label": label})
    return pd.DataFrame(out, columns=["system", "outcome", "kind", "count", "queries", "label"])


MODEL_VAR = "CRMATRIX_MODEL"  # (crmatrix.engine.knobs.MODEL_VAR; the charts load no engine)


def _model_swaps(runs: list[RunTimes], baseline_arm: str, models: dict[str, dict[str, str]]) -> set[tuple[str, str]]:
    """(system, arm): for each model a system embeds with, the arm that is the system's baseline
    but for the model it names (the model swap alone, at the baseline's knobs): the baseline
    itself for its own model, else the first such arm by name."""
    def knobs(r: RunTimes) -> dict:
        return {k: v for k, v in r.provenance.arm.env.items() if k != MODEL_VAR}

    base = {r.system: knobs(r) for r in runs if r.arm == baseline_arm}
    chosen: dict[tuple[str, str], str] = {}
    candidates = {(r.system, r.arm) for r in runs if r.system in base and knobs(r) == base[r.system]}
    for system, arm in sorted(candidates, key=lambda sa: (sa[0], sa[1] != baseline_arm, sa[1])):
        chosen.setdefault((system, models.get(system, {}).get(arm, system)), arm)
    return {(system, arm) for (system, _), arm in chosen.items()}


def model_costs(runs: list[RunTimes], view, models: dict[str, dict[str, str]]) -> pd.DataFrame:
    """One line per embedder and language: each model of a system at the baseline knobs (its
    name under `models:`; a system that embeds with no model of the config is its own embedder,
    named as the system), its headline method's metric (macro mean over the language's
    datasets, the matrix's headline method per row), search latency p50 over their queries, and
    what its indexes cost: texts embedded per second of embedding (None when every text came
    from the cache) and the index's vectors in MB, over the language's distinct corpora (from
    each run's `index_embedding`, None for a system that records none)."""
    method = {(r.dataset, r.system): r.method for r in view.rows}
    swaps = _model_swaps(runs, view.baseline_arm, models)
    groups: dict[tuple, dict] = {}
    for r in sorted(runs, key=lambda r: (r.system, r.arm, r.dataset)):
        m = method.get((r.dataset, r.system))
        if (r.system, r.arm) not in swaps or m is None or m not in r.methods:
            continue
        model = models.get(r.system, {}).get(r.arm, r.system)
        corpus = r.provenance.corpus
        g = groups.setdefault((model, corpus.language),
                              {"system": r.system, "arm": r.arm, "method": m, "values": [], "ms": [], "indexes": {}})
        g["values"].append(r.methods[m].metrics[view.metric])
        g["ms"] += r.methods[m].elapsed_ms
        index = (r.provenance.system_run or {}).get("index_embedding")
        g["indexes"].setdefault(corpus.name, index)  # one index per corpus and arm
    out = []
    for (model, language), g in sorted(groups.items()):
        indexes = list(g["indexes"].values())
        known = all(i is not None for i in indexes)
        embedded = sum(i["embedded"] for i in indexes) if known else 0
        seconds = sum(i.get("embed_seconds", 0.0) for i in indexes) if known else 0.0
        out.append({"model": model, "language": language, "system": g["system"], "arm": g["arm"],
                    "method": g["method"], "value": sum(g["values"]) / len(g["values"]), "datasets": len(g["values"]),
                    "p50_ms": metrics.latency(g["ms"])["p50"],
                    "texts_per_s": round(embedded / seconds, 1) if embedded and seconds > 0 else None,
                    "embedded": embedded if known else None,
                    "index_mb": round(sum(i["bytes"] for i in indexes) / 1e6, 6)
                    if known and all("bytes" in i for i in indexes) else None})
    return pd.DataFrame(out, columns=["model", "language", "system", "arm", "method", "value", "datasets", "p50_ms",
                                      "texts_per_s", "embedded", "index_mb"])
