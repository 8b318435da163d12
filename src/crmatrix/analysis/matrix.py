"""The phase matrix: every arm against the baseline, per dataset, with its uncertainty.

A row is one (dataset, system); a cell is one arm's mean of the headline metric with its
95 % bootstrap interval and, against the baseline, the paired bootstrap interval of Δ, a
paired randomization test (Holm-corrected across the row's family of hypotheses), exact
McNemar on per-query hits at 1, the effect band, and which queries moved. An arm whose
answers repeat another arm's is marked identical to it and is one hypothesis with it (none
when it repeats the baseline). Each row states the effect its queries can detect. Rows roll
up by language and archetype, each arm gets a "one knob across all datasets" line, and a
random-effects pool of its per-dataset deltas (`crmatrix.analysis.meta`).
"""

from __future__ import annotations

import math

from crmatrix import atomic
from crmatrix.analysis import meta, stats
from crmatrix.evaluation import metrics

METRIC = "mrr"
# The do-no-harm gate on structural splits (crmatrix.datasets.splits): an arm must not lose recall@10 there.
GATE_METRIC = "recall@10"
# Public benchmarks (every format but the hand-built ones) report these beside the MRR, each
# with its bootstrap interval; pass@1 (RepoQA's) is whether the first hit is the gold: acc@1.
BENCHMARK_METRICS = ("recall@5", "recall@10", "ndcg@10")


def headline_method(run: dict, preferred: str) -> str:
    """`preferred` when the run has it, else the first method the system's config lists.

    The order comes from the system config recorded in the provenance: the run's own
    `methods` object is written with sorted keys, so its first key is the alphabetical one.
    """
    methods = run["provenance"]["system"]["methods"]
    return preferred if preferred in methods else methods[0]


def _notes(run: dict, method: str) -> dict:
    """What makes a cell read differently from what its arm says: values the system clamped
    (from the builtin engine's provenance), queries that failed (scored as misses; by kind),
    and a blob system's rank-1 scoring."""
    system_run = run["provenance"]["system_run"] or {}  # None for a system that records nothing
    result = run["methods"][method]
    failures = {k: n for k, n in result.get("failures", {}).items() if n}
    notes = {"clamped": system_run.get("knobs", {}).get("notes", []), "failed": sum(failures.values()),
             "failures": failures}
    if result.get("response") == "blob":
        notes["response"] = "blob"
    return notes


def _queries(run: dict, method: str) -> list[dict]:
    return run["methods"][method]["queries"]


def _answers(run: dict, method: str) -> str:
    """What a run answered per query under `method`, timing aside: equal strings are equal results."""
    return atomic.dumps_canonical(sorted(({k: v for k, v in q.items() if k != "elapsed_ms"}
                                          for q in _queries(run, method)), key=lambda q: q["task_id"]))


def _identical_to(by_arm: dict, method: str, arms: list[str]) -> dict[str, str]:
    """arm -> the first arm, in column order, whose per-query results it repeats exactly."""
    first: dict[str, str] = {}
    out = {}
    for arm in (a for a in arms if a in by_arm):
        out[arm] = first.setdefault(_answers(by_arm[arm], method), arm)
    return {a: same for a, same in out.items() if same != a}


def _moved(cell: dict) -> bool:
    return cell["improved"] + cell["regressed"] > 0


def _family(cells: dict, baseline: str, comparisons: list[str] | None) -> list[str]:
    """The row's hypotheses, in column order: one per distinct answer set against the baseline
    (an arm identical to another is that arm's hypothesis; one identical to the baseline is
    none), narrowed to the arms of `comparisons` when it is given. An arm under which no
    query's metric moved is none either: every sign flip of its all-zero differences gives
    p = 1, and whether a query moved is the same under every flip, so leaving it out keeps
    the others' error rate (Tarone's argument) while it would only take their power."""
    family: dict[str, None] = {}
    for arm, cell in cells.items():
        same = cell.get("identical_to") or arm
        if ("p_randomization" in cell and same != baseline and _moved(cell)
                and (comparisons is None or arm in comparisons)):
            family[same] = None
    return list(family)


def _correct(cells: dict, baseline: str, comparisons: list[str] | None) -> list[str]:
    """Holm across the family; an identical arm takes its twin's corrected p, one identical to
    the baseline or moving no query 1, and an arm outside the family None (its unadjusted p stays)."""
    family = _family(cells, baseline, comparisons)
    adjusted = dict(zip(family, stats.holm([cells[a]["p_randomization"] for a in family]), strict=True))
    for arm, cell in cells.items():
        if "p_randomization" in cell:
            same = cell["identical_to"] or arm
            cell["p_holm"] = 1.0 if same == baseline or not _moved(cell) else adjusted.get(same)
    return family


def _detectable(cells: dict, family: list[str], n: int, base_mean: float | None) -> dict:
    """The row's minimum detectable effect: its family's pooled per-query sd of differences, at
    the Bonferroni level alpha/m that bounds Holm's first step, with 80 % power; and for each
    compared cell the queries its Δ would need at that level."""
    alpha = stats.ALPHA / max(len(family), 1)
    sd = math.sqrt(sum(cells[a]["sd_diff"] ** 2 for a in family) / len(family)) if family else None
    mde = stats.detectable_effect(sd, n, alpha) if family else None
    for cell in cells.values():
        if "sd_diff" in cell:
            cell["queries_needed"] = stats.queries_needed(cell["sd_diff"], cell["delta_abs"], alpha)
    return {"abs": mde, "rel": mde / base_mean if mde is not None and base_mean else None, "sd_diff": sd,
            "alpha": alpha, "power": stats.POWER, "n": n}


def _row(dataset: str, system: str, by_arm: dict, arms: list[str], baseline: str, preferred: str,
         archetype: str | None, split: str | None = None, comparisons: list[str] | None = None) -> dict:
    any_run = by_arm.get(baseline) or next(iter(by_arm.values()))
    method = headline_method(any_run, preferred)
    base = by_arm.get(baseline)
    cells, diagnostics, decomposition = {}, {}, {}
    for arm in arms:
        if arm not in by_arm:
            continue
        rows = _queries(by_arm[arm], method)
        values = metrics.per_query(rows, METRIC)
        low, high = stats.bootstrap_ci(values)
        cells[arm] = {METRIC: float(values.mean()) if values.size else 0.0, "ci_low": low, "ci_high": high,
                      "n": len(rows), **_notes(by_arm[arm], method)}
        if base is not None and arm != baseline:
            base_rows = _queries(base, method)
            cmp = stats.compare_arm(base_rows, rows, METRIC)
            cells[arm].update({k: cmp[k] for k in (
                "delta_abs", "delta_rel", "band", "direction", "sd_diff", "p_randomization", "mcnemar_b",
                "mcnemar_c", "p_mcnemar", "improved", "regressed", "unchanged")})
            cells[arm]["delta_ci_low"], cells[arm]["delta_ci_high"] = cmp["ci_low"], cmp["ci_high"]
            decomposition[arm] = stats.decompose(base_rows, rows)
        diag = stats.hybrid_diagnostics({m: _queries(by_arm[arm], m) for m in by_arm[arm]["methods"]})
        if diag:
            diagnostics[arm] = {k: v["count"] for k, v in diag.items()}
    same = _identical_to(by_arm, method, arms)
    for arm, cell in cells.items():
        cell["identical_to"] = same.get(arm)
    family = _correct(cells, baseline, comparisons)
    n = cells[next(iter(cells))]["n"]
    prov = any_run["provenance"]
    return {"dataset": dataset, "system": system, "method": method, "corpus": prov["corpus"]["name"],
            "language": prov["corpus"]["language"], "archetype": archetype, "split": split, "n": n,
            "family": family, "detectable": _detectable(cells, family, n, cells.get(baseline, {}).get(METRIC)),
            "cells": cells, "decomposition": decomposition, "hybrid_diagnostics": diagnostics,
            "token_efficiency": any_run["methods"][method].get("token_efficiency")}


def _rollup(rows: list[dict], key: str, arms: list[str], baseline: str) -> list[dict]:
    """Macro averages over the datasets of each group, per system (each dataset weighs the
    same; two systems' numbers are never averaged together)."""
    groups: dict[tuple[str, str], list[dict]] = {}
    for r in rows:
        groups.setdefault((r["system"], r[key] or "?"), []).append(r)
    out = []
    for (system, group), members in sorted(groups.items()):
        entry = {key: group, "system": system, "datasets": sorted(r["dataset"] for r in members), "arms": {}}
        for arm in arms:
            have = [r["cells"][arm] for r in members if arm in r["cells"]]
            if not have:
                continue
            cell = {METRIC: sum(c[METRIC] for c in have) / len(have), "datasets": len(have)}
            if arm != baseline:
                deltas = [c["delta_abs"] for c in have if "delta_abs" in c]
                if deltas:
                    cell["mean_delta_abs"] = sum(deltas) / len(deltas)
                    cell["better"] = sum(d > 0 for d in deltas)
                    cell["worse"] = sum(d < 0 for d in deltas)
            entry["arms"][arm] = cell
        out.append(entry)
    return out


def _significant(cell: dict) -> bool:
    return cell["p_holm"] is not None and cell["p_holm"] < stats.ALPHA


def _knob_table(rows: list[dict], arms: list[str], baseline: str) -> list[dict]:
    """One line per arm: how it did against the baseline on every dataset."""
    out = []
    for arm in arms:
        if arm == baseline:
            continue
        per = [{"dataset": r["dataset"], "system": r["system"], **{k: r["cells"][arm][k] for k in (
            "delta_abs", "delta_rel", "band", "p_holm", "improved", "regressed", "identical_to")}}
               for r in rows if "delta_abs" in r["cells"].get(arm, {})]
        out.append({"arm": arm, "datasets": per,
                    "better": sum(p["delta_abs"] > 0 for p in per), "worse": sum(p["delta_abs"] < 0 for p in per),
                    "significant": sum(_significant(p) for p in per)})
    return out


# A dataset's verdict on an arm: the sign of a Δ outside the flat band, else inert.
VERDICTS = ("positive", "negative", "inert")


def _study(row: dict, arm: str) -> dict:
    """One dataset as a study of the arm: its paired Δ, the Δ's standard error sd_diff/√n and
    normal interval (the ones the pool weighs by), and its verdict."""
    c = row["cells"][arm]
    se = c["sd_diff"] / math.sqrt(c["n"]) if c["n"] else 0.0
    low, high = meta.normal_interval(c["delta_abs"], se)
    verdict = "inert" if c["band"] == "flat" else "positive" if c["delta_abs"] > 0 else "negative"
    return {"dataset": row["dataset"], "language": row["language"] or "?", "split": row.get("split"), "n": c["n"],
            "delta": c["delta_abs"], "se": se, "ci_low": low, "ci_high": high, "verdict": verdict,
            "identical_to": c["identical_to"]}


def _pool(group: str, kind: str, studies: list[dict]) -> dict:
    """Random-effects pool of the studies whose queries varied (a Δ with no per-query spread
    has no sampling variance to weigh by; it is listed, not pooled)."""
    varied = [s for s in studies if s["se"] > 0]
    pooled = meta.random_effects([s["delta"] for s in varied], [s["se"] ** 2 for s in varied]) if varied else None
    if pooled:
        pooled["weights"] = dict(zip((s["dataset"] for s in varied), pooled["weights"], strict=True))
    return {"group": group, "kind": kind, "datasets": [s["dataset"] for s in studies],
            "unvaried": [s["dataset"] for s in studies if s["se"] == 0],
            "verdict": {v: sum(s["verdict"] == v for s in studies) for v in VERDICTS}, "pooled": pooled}


def _pooled(rows: list[dict], arms: list[str], baseline: str) -> list[dict]:
    """Per (system, arm): each dataset's Δ and the pool per language and over all plain datasets;
    structural splits re-ask a dataset's queries, so they pool apart, never with their source."""
    out = []
    for system in sorted({r["system"] for r in rows}):
        for arm in (a for a in arms if a != baseline):
            studies = [_study(r, arm) for r in rows if r["system"] == system and "delta_abs" in r["cells"].get(arm, {})]
            plain = [s for s in studies if not s["split"]]
            splits = [s for s in studies if s["split"]]
            groups = [_pool(lang, "language", [s for s in plain if s["language"] == lang])
                      for lang in sorted({s["language"] for s in plain})]
            groups += [_pool("all datasets", "overall", plain)] if plain else []
            groups += [_pool("structural splits", "split", splits)] if splits else []
            if studies:
                out.append({"system": system, "arm": arm, "studies": studies, "groups": groups})
    return out


def _gates(table: dict[tuple, dict], rows: list[dict], splits: dict[str, str], arms: list[str], baseline: str
           ) -> list[dict]:
    """Per structural row: each arm's recall@10 of the headline method against the baseline's."""
    out = []
    for r in rows:
        by_arm = table[(r["dataset"], r["system"])]
        if splits.get(r["dataset"]) != "structural" or baseline not in by_arm or len(by_arm) == 1:
            continue  # no split, or nothing to gate: a system that runs the baseline arm alone
        value = {a: float(metrics.per_query(_queries(by_arm[a], r["method"]), GATE_METRIC).mean())
                 for a in arms if a in by_arm}
        out.append({"dataset": r["dataset"], "system": r["system"], "metric": GATE_METRIC, "baseline": value[baseline],
                    "arms": {a: {"value": v, "pass": v >= value[baseline] - stats.TOLERANCE}
                             for a, v in value.items() if a != baseline}})
    return out


def _with_ci(values) -> dict:
    low, high = stats.bootstrap_ci(values)
    return {"mean": float(values.mean()) if values.size else 0.0, "ci_low": low, "ci_high": high}


def _scores(rows: list[dict], names: dict[str, str]) -> dict:
    return {label: _with_ci(metrics.per_query(rows, metric)) for label, metric in names.items()}


def _benchmarks(table: dict[tuple, dict], rows: list[dict], arms: list[str], formats: dict[str, dict],
                summaries: dict[str, dict]) -> list[dict]:
    """Per row of a public-benchmark dataset: each arm's recall@5/10, ndcg@10 (and pass@1 for
    RepoQA) with bootstrap intervals, the same per stratum (repository or library) when the
    tasks have more than one, and the rows the loader dropped, by reason."""
    out = []
    for r in rows:
        fmt = formats.get(r["dataset"])
        if fmt is None or fmt["hand_built"]:
            continue
        names = {**({"pass@1": "acc@1"} if fmt["pass_at_1"] else {}), **{m: m for m in BENCHMARK_METRICS}}
        by_arm = table[(r["dataset"], r["system"])]
        entry = {"dataset": r["dataset"], "system": r["system"], "method": r["method"], "format": fmt["name"],
                 "metrics": list(names), "arms": {}, "strata": {}, "dropped": None}
        for arm in (a for a in arms if a in by_arm):
            queries = _queries(by_arm[arm], r["method"])
            entry["arms"][arm] = _scores(queries, names)
            strata: dict[str, list[dict]] = {}
            for q in queries:
                strata.setdefault(q.get("stratum", ""), []).append(q)
            if len(strata) > 1:
                entry["strata"][arm] = {k: {"n": len(v), **_scores(v, names)} for k, v in sorted(strata.items())}
        summary = summaries.get(r["dataset"])
        if summary is not None:
            entry["dropped"] = {"tasks": summary["tasks"], "dropped": summary["dropped"],
                                "by_reason": summary["dropped_by_reason"]}
        out.append(entry)
    return out


def build(runs: list[dict], baseline_arm: str, preferred_method: str, arm_order: list[str] = (),
          archetypes: dict[str, str] | None = None, splits: dict[str, str] | None = None,
          comparisons: list[str] | None = None, test_ledger: list[dict] | None = None,
          formats: dict[str, dict] | None = None, summaries: dict[str, dict] | None = None) -> dict:
    """`runs` are run JSONs in any order; rows come sorted by dataset and system, columns in
    `arm_order` (the config's order) with the baseline first, so the same runs give the same bytes.
    `comparisons`: the arms whose tests form each row's correction family (None: every arm).
    `test_ledger`: how often each test-split run's config was scored there (crmatrix.datasets.ledger).
    `formats`: each dataset's format's facts (crmatrix.datasets.registry.Format.matrix_facts);
    `summaries`: each dataset stage's summary of dropped rows."""
    present = {r["arm"] for r in runs}
    order = [a for a in arm_order if a in present] + sorted(present - set(arm_order))
    arms = sorted(order, key=lambda a: a != baseline_arm)
    table: dict[tuple, dict] = {}
    for r in runs:
        table.setdefault((r["dataset"], r["system"]), {})[r["arm"]] = r
    rows = [_row(d, s, by_arm, arms, baseline_arm, preferred_method, (archetypes or {}).get(d),
                 (splits or {}).get(d), comparisons)
            for (d, s), by_arm in sorted(table.items())]
    return {"metric": METRIC, "baseline_arm": baseline_arm, "arms": arms, "rows": rows,
            "by_language": _rollup(rows, "language", arms, baseline_arm),
            "by_archetype": _rollup(rows, "archetype", arms, baseline_arm),
            "knobs": _knob_table(rows, arms, baseline_arm),
            "gates": _gates(table, rows, splits or {}, arms, baseline_arm),
            "pooled": _pooled(rows, arms, baseline_arm),
            "benchmarks": _benchmarks(table, rows, arms, formats or {}, summaries or {}),
            "test_ledger": test_ledger or [],
            "statistics": {"bootstrap_resamples": 1000, "seed": 0, "level": 0.95, "alpha": stats.ALPHA,
                           "test": "paired randomization (sign flip), Holm across the row's family: one hypothesis "
                                   "per distinct arm that moved a query (identical arms are one), the arms of "
                                   "`comparisons` when set",
                           "comparisons": comparisons,
                           "detectable_effect": "(z(1 - alpha/2m) + z(0.8)) * sd_diff / sqrt(n), m the family's size",
                           "pooling": "random effects, DerSimonian-Laird; Δ's variance sd_diff^2 / n",
                           "bands": "flat < 1 %, mild, strong >= 5 % of the baseline"}}


# --- Markdown ---------------------------------------------------------------------------------

def _p(p: float) -> str:
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def _p_text(cell: dict) -> str:
    """The corrected p beside the unadjusted one; an arm outside the family shows the latter only."""
    raw = _p(cell["p_randomization"])
    if cell["p_holm"] is None:
        return f"p={raw} unadjusted (not in the family)"
    return f"p={_p(cell['p_holm'])} ({raw} unadj.)"


def _cell_text(cell: dict | None) -> str:
    if cell is None:
        return "—"
    text = f"{cell[METRIC]:.3f} [{cell['ci_low']:.2f}, {cell['ci_high']:.2f}]"
    if cell.get("identical_to"):
        text += f"<br>≡ {cell['identical_to']}"
    elif "delta_abs" in cell:
        rel = "" if cell["delta_rel"] is None else f" {cell['delta_rel']:+.1%}"
        sig = "*" if _significant(cell) else ""
        text += f"<br>Δ {cell['delta_abs']:+.3f}{rel} {cell['band']}{sig}"
        if not _moved(cell):
            text += "<br>no query moved"
        else:
            text += f"<br>{_p_text(cell)} ↑{cell['improved']} ↓{cell['regressed']}"
            if not sig and cell["queries_needed"]:
                text += f"<br>needs ≈{cell['queries_needed']} queries"
    if cell.get("response") == "blob":
        text += "<br>blob: rank-1 only"
    flags = ["clamped"] if cell["clamped"] else []
    if cell["failed"]:
        kinds = ", ".join(f"{n} {k}" for k, n in cell["failures"].items())
        flags.append(f"{cell['failed']} failed ({kinds})")
    return text + (f"<br>⚠ {', '.join(flags)}" if flags else "")


def _detectable_text(d: dict) -> str:
    if d["abs"] is None:
        return "—"
    return f"±{d['abs']:.3f}" + ("" if d["rel"] is None else f" ({d['rel']:.0%})")


def _p_or_none(p: float | None) -> str:
    return "—" if p is None else _p(p)


def _interval(x: dict) -> str:
    return f"{x['estimate']:+.3f} [{x['ci_low']:+.3f}, {x['ci_high']:+.3f}]"


def _pool_text(g: dict) -> str:
    """A pooled group in words: estimate and interval, I², datasets pooled, and the verdicts."""
    v, p = g["verdict"], g["pooled"]
    tally = f"{v['positive']} positive / {v['negative']} negative / {v['inert']} inert"
    if p is None:
        return f"no variation to pool ({tally})"
    i2 = "" if p["i2"] is None else f", I² {p['i2']:.0%}"
    return f"{_interval(p)} (k {p['k']}{i2}; {tally})"


def _pooled_md(pooled: list[dict]) -> list[str]:
    if not pooled:
        return []
    lines = ["", "## One knob pooled across datasets (random effects)", "",
             "Each dataset's paired Δ weighs by 1 / (its variance + τ²), τ² by DerSimonian–Laird; the interval is "
             "95 % normal; I² is the share of the spread between datasets beyond chance. Verdicts: the sign of a "
             "Δ outside the flat band, else inert. A dataset whose Δ did not vary over queries is counted, not pooled.",
             "", "| system | arm | all datasets | by language | structural splits |", "|---|---|---|---|---|"]
    for e in pooled:
        by = {g["kind"]: g for g in e["groups"]}
        langs = "; ".join(f"{g['group']} {_pool_text(g)}" for g in e["groups"] if g["kind"] == "language")
        cols = [_pool_text(by["overall"]) if "overall" in by else "—", langs or "—",
                _pool_text(by["split"]) if "split" in by else "—"]
        lines.append(f"| {e['system']} | {e['arm']} | " + " | ".join(cols) + " |")
    return lines


def _datasets(n: int) -> str:
    return f"{n} dataset" + ("" if n == 1 else "s")


def _rollup_md(title: str, key: str, entries: list[dict], arms: list[str]) -> list[str]:
    lines = [f"## {title}", "", f"| {key} | system | datasets | " + " | ".join(arms) + " |",
             "|---|---|---|" + "---:|" * len(arms)]
    for e in entries:
        cells = []
        for a in arms:
            c = e["arms"].get(a)
            if c is None:
                cells.append("—")
            elif "mean_delta_abs" in c:
                cells.append(f"{c[METRIC]:.3f} (Δ {c['mean_delta_abs']:+.3f}; {_datasets(c['better'])} better, "
                             f"{c['worse']} worse)")
            else:
                cells.append(f"{c[METRIC]:.3f}")
        lines.append(f"| {e[key]} | {e['system']} | {', '.join(e['datasets'])} | " + " | ".join(cells) + " |")
    return lines + [""]


def to_markdown(matrix: dict) -> str:
    arms, base = matrix["arms"], matrix["baseline_arm"]
    lines = [
        f"# Phase matrix — {matrix['metric']} per dataset and arm",
        "",
        f"Each cell: {matrix['metric']} of the row's headline method with its 95 % bootstrap interval "
        f"(1000 resamples of the queries, seed 0); against `{base}`: Δ (absolute, relative), effect band "
        "(flat < 1 %, strong ≥ 5 %; `*` when significant), the paired randomization p-value after Holm "
        "correction across the row's family, then unadjusted, and how many of the row's queries improved (↑) or "
        "regressed (↓); a change not significant says how many queries would detect it. `≡ arm`: the same "
        "per-query results as that arm, so one hypothesis with it (none if it is the baseline); an arm that "
        "moved no query is no hypothesis either. "
        "MDE: the smallest |Δ| the row's n and per-query spread detect with 80 % power at the family's level. "
        "`⚠ clamped`: a value of the arm was out of range and clamped (the notes are in phase-matrix.json); "
        "`⚠ n failed`: n queries raised in the system and count as misses; `—`: the system does not take "
        "part in the arm (its `arms:`).",
        "",
        "| dataset | system | method | language | n | MDE | " + " | ".join(arms) + " |",
        "|---|---|---|---|---:|---:|" + "---:|" * len(arms),
    ]
    for r in matrix["rows"]:
        cells = " | ".join(_cell_text(r["cells"].get(a)) for a in arms)
        lines.append(f"| {r['dataset']} | {r['system']} | {r['method']} | {r['language'] or '?'} | {r['n']} | "
                     f"{_detectable_text(r['detectable'])} | {cells} |")
    lines.append("")
    lines += _rollup_md("By language (macro average over datasets)", "language", matrix["by_language"], arms)
    lines += _rollup_md("By archetype (macro average over datasets)", "archetype", matrix["by_archetype"], arms)
    lines += ["## One knob across all datasets", "",
              "| arm | datasets better | datasets worse | significant | per dataset (Δ, band, corrected p) |",
              "|---|---:|---:|---:|---|"]
    for k in matrix["knobs"]:
        per = "; ".join(f"{d['dataset']} " + (f"≡ {d['identical_to']}" if d["identical_to"] else
                                              f"{d['delta_abs']:+.3f} {d['band']} p={_p_or_none(d['p_holm'])}")
                        for d in k["datasets"])
        lines.append(f"| {k['arm']} | {k['better']} | {k['worse']} | {k['significant']} | {per} |")
    lines += _pooled_md(matrix["pooled"])
    if matrix["gates"]:
        lines += ["", f"## Do-no-harm gate: {GATE_METRIC} on structural splits must not drop", "",
                  f"| dataset | system | {base} | " + " | ".join(a for a in arms if a != base) + " |",
                  "|---|---|---:|" + "---:|" * (len(arms) - 1)]
        for g in matrix["gates"]:
            cells = [("—" if (c := g["arms"].get(a)) is None else
                      f"{c['value']:.3f} {'pass' if c['pass'] else 'FAIL'}") for a in arms if a != base]
            lines.append(f"| {g['dataset']} | {g['system']} | {g['baseline']:.3f} | " + " | ".join(cells) + " |")
    lines += _benchmarks_md(matrix.get("benchmarks", []), base)
    if matrix["test_ledger"]:
        lines += ["", "## Test-split ledger", "",
                  "How often each config (dataset file, split, system settings, arm variables, model) was scored "
                  "on a test split, these runs included (`baselines/test-ledger.json`). A test set is looked at "
                  "once: iterate on small_dev; scoring a config on test again needs `--config force_test=true`.", "",
                  "| dataset | split | system | arm | config | times scored | on |", "|---|---|---|---|---|---:|---|"]
        lines += [f"| {e['dataset']} | {e['split']} | {e['system']} | {e['arm']} | `{e['config']}` | {e['count']} | "
                  f"{', '.join(e['dates'])} |" for e in matrix["test_ledger"]]
    lines += ["", "## Per-query decomposition against the baseline", ""]
    for r in matrix["rows"]:
        for arm, dec in r["decomposition"].items():
            moved = dec["improved"] + dec["regressed"]
            if not moved:
                continue
            lines.append(f"- **{r['dataset']} · {arm}** ({r['method']}): " + ", ".join(
                f"{q['task_id']} {q['transition']}" for q in sorted(moved, key=lambda q: q["task_id"])))
        if r["hybrid_diagnostics"]:
            diag = r["hybrid_diagnostics"].get(base) or next(iter(r["hybrid_diagnostics"].values()))
            lines.append(f"- {r['dataset']} hybrid diagnostics ({base}): " +
                         ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in diag.items()))
    with_tokens = [r for r in matrix["rows"] if r.get("token_efficiency")]
    if with_tokens:
        grep = with_tokens[0]["token_efficiency"]["baseline"]
        lines += ["", f"## Token efficiency against grep-and-read ({base}, headline method)", "",
                  "Tokens an agent reads per query: the system's first hits against reading the top "
                  f"{grep['read_files']} files matched by the query's words ({grep['read_lines']} lines each); "
                  "a hit is the gold among what was read. Compare savings where both hit.", ""]
        for r in with_tokens:
            lines += [f"**{r['dataset']} · {r['system']}** ({r['method']})", "",
                      *_token_table(r["token_efficiency"]), ""]
    return "\n".join(lines) + "\n"


def _ci_text(x: dict) -> str:
    return f"{x['mean']:.3f} [{x['ci_low']:.2f}, {x['ci_high']:.2f}]"


def _benchmarks_md(entries: list[dict], base: str) -> list[str]:
    """Per public-benchmark dataset: a table of arms by metric (95 % bootstrap intervals), the
    per-stratum table of the baseline arm, and what the loader dropped."""
    if not entries:
        return []
    lines = ["", "## Public benchmarks: recall and nDCG", "",
             "Per arm, the headline method's metrics with 95 % bootstrap intervals (1000 resamples, seed 0); "
             "file-level gold (SWE-QA) ranks each file at its first hit. pass@1 (RepoQA): the first hit is the "
             "needle or a function AST-equal to it.", ""]
    for e in entries:
        lines += [f"**{e['dataset']} · {e['system']}** ({e['format']}, {e['method']})", ""]
        if e["dropped"] is not None:
            d = e["dropped"]
            reasons = "; ".join(f"{n} {r}" for r, n in d["by_reason"].items())
            lines += [f"{d['tasks']} tasks; {d['dropped']} rows or citations dropped"
                      + (f": {reasons}" if reasons else ""), ""]
        lines += ["| arm | " + " | ".join(e["metrics"]) + " |", "|---|" + "---:|" * len(e["metrics"])]
        for arm, scores in e["arms"].items():
            lines.append(f"| {arm} | " + " | ".join(_ci_text(scores[m]) for m in e["metrics"]) + " |")
        strata = e["strata"].get(base) or next(iter(e["strata"].values()), None)
        if strata:
            arm = base if base in e["strata"] else next(iter(e["strata"]))
            lines += ["", f"By stratum ({arm}):", "", "| stratum | n | " + " | ".join(e["metrics"]) + " |",
                      "|---|---:|" + "---:|" * len(e["metrics"])]
            for name, scores in strata.items():
                cis = " | ".join(_ci_text(scores[m]) for m in e["metrics"])
                lines.append(f"| {name or '—'} | {scores['n']} | {cis} |")
        lines.append("")
    return lines


def _token_table(eff: dict) -> list[str]:
    """The per-query-type table, as Markdown lines."""
    def pct(x):
        return "—" if x is None else f"{x:.0%}"

    lines = ["| query type | n | grep-and-read tokens | system tokens | saving | grep hit | system hit "
             "| both hit | saving when both hit |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for qt, e in [*eff["by_query_type"].items(), ("all", eff["all"])]:
        lines.append(f"| {qt} | {e['n']} | {e['grep_tokens']:.0f} | {e['system_tokens']:.0f} | {pct(e['saving'])} | "
                     f"{e['grep_hit_rate']:.0%} | {e['system_hit_rate']:.0%} | {e['both_hit']} | "
                     f"{pct(e['saving_both_hit'])} |")
    return lines


def write(matrix: dict, json_path, md_path) -> None:
    atomic.write_json(json_path, matrix)
    atomic.write_text(md_path, to_markdown(matrix))
