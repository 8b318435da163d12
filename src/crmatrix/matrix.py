"""The phase matrix: one row per (dataset, system), one column per arm, each arm against the baseline."""

from __future__ import annotations

from crmatrix import atomic

METRIC = "mrr"


def headline_method(methods: list[str], preferred: str) -> str:
    return preferred if preferred in methods else methods[0]


def build(runs: list[dict], baseline_arm: str, preferred_method: str, arm_order: list[str] = ()) -> dict:
    """`runs` are run JSONs (any order); rows come sorted by dataset and system, columns in
    `arm_order` (the config's order) with the baseline first, so the same runs give the same matrix."""
    present = {r["arm"] for r in runs}
    order = [a for a in arm_order if a in present] + sorted(present - set(arm_order))
    arms = sorted(order, key=lambda a: a != baseline_arm)
    table: dict[tuple, dict] = {}
    for r in runs:
        table.setdefault((r["dataset"], r["system"]), {})[r["arm"]] = r
    rows = []
    for (dataset, system), by_arm in sorted(table.items()):
        any_run = next(iter(by_arm.values()))
        method = headline_method(list(any_run["methods"]), preferred_method)
        base = by_arm.get(baseline_arm)
        base_v = base["methods"][method]["metrics"][METRIC] if base else None
        cells = {}
        for arm in arms:
            if arm not in by_arm:
                continue
            m = by_arm[arm]["methods"][method]["metrics"]
            cell = {METRIC: m[METRIC], "n": m["n"]}
            if base_v is not None and arm != baseline_arm:
                cell["delta_abs"] = m[METRIC] - base_v
                cell["delta_rel"] = (m[METRIC] - base_v) / base_v if base_v else None
            cells[arm] = cell
        prov = any_run["provenance"]
        rows.append({"dataset": dataset, "system": system, "method": method,
                     "corpus": prov["corpus"]["name"], "language": prov["corpus"]["language"],
                     "n": any_run["methods"][method]["metrics"]["n"], "cells": cells})
    return {"metric": METRIC, "baseline_arm": baseline_arm, "arms": arms, "rows": rows}


def _cell_text(cell: dict | None) -> str:
    if cell is None:
        return "—"
    text = f"{cell[METRIC]:.3f}"
    if "delta_abs" in cell:
        rel = "" if cell["delta_rel"] is None else f", {cell['delta_rel']:+.1%}"
        text += f" ({cell['delta_abs']:+.3f}{rel})"
    return text


def to_markdown(matrix: dict) -> str:
    arms = matrix["arms"]
    lines = [
        f"# Phase matrix — {matrix['metric']} per dataset and arm",
        "",
        f"Each cell: {matrix['metric']} of the row's headline method, then (Δabs, Δrel) against "
        f"`{matrix['baseline_arm']}`.",
        "",
        "| dataset | system | method | language | n | " + " | ".join(arms) + " |",
        "|---|---|---|---|---:|" + "---:|" * len(arms),
    ]
    for r in matrix["rows"]:
        cells = " | ".join(_cell_text(r["cells"].get(a)) for a in arms)
        lines.append(f"| {r['dataset']} | {r['system']} | {r['method']} | {r['language'] or '?'} | {r['n']} | {cells} |")
    return "\n".join(lines) + "\n"


def write(matrix: dict, json_path, md_path) -> None:
    atomic.write_json(json_path, matrix)
    atomic.write_text(md_path, to_markdown(matrix))
