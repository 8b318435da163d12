"""What the phase matrix says across its rows: macro averages by language and archetype, one
line per arm over every dataset, the do-no-harm gate on structural splits, and the public
benchmarks' metrics (each from its cells' statistics)."""

from __future__ import annotations

from crmatrix.analysis import stats
from crmatrix.analysis.cells import GATE_METRIC, METRIC, is_benchmark
from crmatrix.analysis.matrix.rows import significant


def rollup(rows: list[dict], key: str, arms: list[str], baseline: str) -> list[dict]:
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


def knob_table(rows: list[dict], arms: list[str], baseline: str) -> list[dict]:
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
                    "significant": sum(significant(p) for p in per)})
    return out


def gates(table: dict[tuple, dict], rows: list[dict], splits: dict[str, str], arms: list[str], baseline: str
          ) -> list[dict]:
    """Per structural row: each arm's recall@10 of the headline method against the baseline's."""
    out = []
    for r in rows:
        docs = table[(r["dataset"], r["system"])]
        if splits.get(r["dataset"]) != "structural" or baseline not in docs or len(docs) == 1:
            continue  # no split, or nothing to gate: a system that runs the baseline arm alone
        value = {a: docs[a][GATE_METRIC] for a in arms if a in docs}
        out.append({"dataset": r["dataset"], "system": r["system"], "metric": GATE_METRIC, "baseline": value[baseline],
                    "arms": {a: {"value": v, "pass": v >= value[baseline] - stats.TOLERANCE}
                             for a, v in value.items() if a != baseline}})
    return out


def benchmarks(table: dict[tuple, dict], rows: list[dict], arms: list[str], summaries: dict[str, dict]) -> list[dict]:
    """Per row of a public-benchmark dataset: each arm's metrics with their intervals, the same
    per stratum when there are strata, and the rows the loader dropped, by reason."""
    out = []
    for r in rows:
        docs = table[(r["dataset"], r["system"])]
        present = [a for a in arms if a in docs]
        fmt = docs[present[0]]["format"]
        if not is_benchmark(fmt):
            continue
        entry = {"dataset": r["dataset"], "system": r["system"], "method": r["method"], "format": fmt["name"],
                 "metrics": docs[present[0]]["benchmark"]["metrics"], "arms": {}, "strata": {}, "dropped": None}
        for arm in present:
            entry["arms"][arm] = docs[arm]["benchmark"]["scores"]
            if docs[arm]["benchmark"]["strata"] is not None:
                entry["strata"][arm] = docs[arm]["benchmark"]["strata"]
        summary = summaries.get(r["dataset"])
        if summary is not None:
            entry["dropped"] = {"tasks": summary["tasks"], "dropped": summary["dropped"],
                                "by_reason": summary["dropped_by_reason"],
                                **({"gold": summary["gold"]} if "gold" in summary else {})}
        out.append(entry)
    return out
