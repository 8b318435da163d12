"""The phase matrix: every arm against the baseline, per dataset, with its uncertainty.

A row is one (dataset, system); a cell is one arm's mean of the headline metric with its
95 % bootstrap interval and, against the baseline, the paired bootstrap interval of Δ, a
paired randomization test (Holm-corrected across the arms of the row), exact McNemar on
per-query hits at 1, the effect band, and which queries moved. Rows roll up by language
and archetype, and each arm gets a "one knob across all datasets" line.
"""

from __future__ import annotations

from crmatrix import atomic, metrics, stats

METRIC = "mrr"
# The do-no-harm gate on structural splits (crmatrix.splits): an arm must not lose recall@10 there.
GATE_METRIC = "recall@10"


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


def _row(dataset: str, system: str, by_arm: dict, arms: list[str], baseline: str, preferred: str,
         archetype: str | None) -> dict:
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
                "delta_abs", "delta_rel", "band", "direction", "p_randomization", "mcnemar_b", "mcnemar_c",
                "p_mcnemar", "improved", "regressed", "unchanged")})
            cells[arm]["delta_ci_low"], cells[arm]["delta_ci_high"] = cmp["ci_low"], cmp["ci_high"]
            decomposition[arm] = stats.decompose(base_rows, rows)
        diag = stats.hybrid_diagnostics({m: _queries(by_arm[arm], m) for m in by_arm[arm]["methods"]})
        if diag:
            diagnostics[arm] = {k: v["count"] for k, v in diag.items()}
    compared = [a for a in arms if a in cells and "p_randomization" in cells[a]]
    for arm, p in zip(compared, stats.holm([cells[a]["p_randomization"] for a in compared])):
        cells[arm]["p_holm"] = p
    prov = any_run["provenance"]
    return {"dataset": dataset, "system": system, "method": method, "corpus": prov["corpus"]["name"],
            "language": prov["corpus"]["language"], "archetype": archetype, "n": cells[next(iter(cells))]["n"],
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


def _knob_table(rows: list[dict], arms: list[str], baseline: str) -> list[dict]:
    """One line per arm: how it did against the baseline on every dataset."""
    out = []
    for arm in arms:
        if arm == baseline:
            continue
        per = [{"dataset": r["dataset"], "system": r["system"], **{k: r["cells"][arm][k] for k in (
            "delta_abs", "delta_rel", "band", "p_holm", "improved", "regressed")}}
               for r in rows if "delta_abs" in r["cells"].get(arm, {})]
        out.append({"arm": arm, "datasets": per,
                    "better": sum(p["delta_abs"] > 0 for p in per), "worse": sum(p["delta_abs"] < 0 for p in per),
                    "significant": sum(p["p_holm"] < 0.05 for p in per)})
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


def build(runs: list[dict], baseline_arm: str, preferred_method: str, arm_order: list[str] = (),
          archetypes: dict[str, str] | None = None, splits: dict[str, str] | None = None) -> dict:
    """`runs` are run JSONs in any order; rows come sorted by dataset and system, columns in
    `arm_order` (the config's order) with the baseline first, so the same runs give the same bytes."""
    present = {r["arm"] for r in runs}
    order = [a for a in arm_order if a in present] + sorted(present - set(arm_order))
    arms = sorted(order, key=lambda a: a != baseline_arm)
    table: dict[tuple, dict] = {}
    for r in runs:
        table.setdefault((r["dataset"], r["system"]), {})[r["arm"]] = r
    rows = [_row(d, s, by_arm, arms, baseline_arm, preferred_method, (archetypes or {}).get(d))
            for (d, s), by_arm in sorted(table.items())]
    return {"metric": METRIC, "baseline_arm": baseline_arm, "arms": arms, "rows": rows,
            "by_language": _rollup(rows, "language", arms, baseline_arm),
            "by_archetype": _rollup(rows, "archetype", arms, baseline_arm),
            "knobs": _knob_table(rows, arms, baseline_arm),
            "gates": _gates(table, rows, splits or {}, arms, baseline_arm),
            "statistics": {"bootstrap_resamples": 1000, "seed": 0, "level": 0.95,
                           "test": "paired randomization (sign flip), Holm across the arms of a row",
                           "bands": "flat < 1 %, mild, strong >= 5 % of the baseline"}}


# --- Markdown ---------------------------------------------------------------------------------

def _p(p: float) -> str:
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def _cell_text(cell: dict | None) -> str:
    if cell is None:
        return "—"
    text = f"{cell[METRIC]:.3f} [{cell['ci_low']:.2f}, {cell['ci_high']:.2f}]"
    if "delta_abs" in cell:
        rel = "" if cell["delta_rel"] is None else f" {cell['delta_rel']:+.1%}"
        sig = "*" if cell["p_holm"] < 0.05 else ""
        text += (f"<br>Δ {cell['delta_abs']:+.3f}{rel} {cell['band']}{sig}"
                 f"<br>p={_p(cell['p_holm'])} ↑{cell['improved']} ↓{cell['regressed']}")
    if cell.get("response") == "blob":
        text += "<br>blob: rank-1 only"
    flags = ["clamped"] if cell["clamped"] else []
    if cell["failed"]:
        kinds = ", ".join(f"{n} {k}" for k, n in cell["failures"].items())
        flags.append(f"{cell['failed']} failed ({kinds})")
    return text + (f"<br>⚠ {', '.join(flags)}" if flags else "")


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
                cells.append(f"{c[METRIC]:.3f} (Δ {c['mean_delta_abs']:+.3f}, {c['better']}↑ {c['worse']}↓)")
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
        "correction across the row's arms, and how many queries improved (↑) or regressed (↓). "
        "`⚠ clamped`: a value of the arm was out of range and clamped (the notes are in phase-matrix.json); "
        "`⚠ n failed`: n queries raised in the system and count as misses; `—`: the system does not take "
        "part in the arm (its `arms:`).",
        "",
        "| dataset | system | method | language | n | " + " | ".join(arms) + " |",
        "|---|---|---|---|---:|" + "---:|" * len(arms),
    ]
    for r in matrix["rows"]:
        cells = " | ".join(_cell_text(r["cells"].get(a)) for a in arms)
        lines.append(f"| {r['dataset']} | {r['system']} | {r['method']} | {r['language'] or '?'} | {r['n']} | {cells} |")
    lines.append("")
    lines += _rollup_md("By language (macro average over datasets)", "language", matrix["by_language"], arms)
    lines += _rollup_md("By archetype (macro average over datasets)", "archetype", matrix["by_archetype"], arms)
    lines += ["## One knob across all datasets", "", "| arm | better | worse | significant | per dataset (Δ, band, p) |",
              "|---|---:|---:|---:|---|"]
    for k in matrix["knobs"]:
        per = "; ".join(f"{d['dataset']} {d['delta_abs']:+.3f} {d['band']} p={_p(d['p_holm'])}" for d in k["datasets"])
        lines.append(f"| {k['arm']} | {k['better']} | {k['worse']} | {k['significant']} | {per} |")
    if matrix["gates"]:
        lines += ["", f"## Do-no-harm gate: {GATE_METRIC} on structural splits must not drop", "",
                  f"| dataset | system | {base} | " + " | ".join(a for a in arms if a != base) + " |",
                  "|---|---|---:|" + "---:|" * (len(arms) - 1)]
        for g in matrix["gates"]:
            cells = [("—" if (c := g["arms"].get(a)) is None else
                      f"{c['value']:.3f} {'pass' if c['pass'] else 'FAIL'}") for a in arms if a != base]
            lines.append(f"| {g['dataset']} | {g['system']} | {g['baseline']:.3f} | " + " | ".join(cells) + " |")
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
