"""A row of the phase matrix, one (dataset, system), from the statistics of its cells
(`crmatrix.analysis.cells`): which arms repeat another's answers, the row's family of
hypotheses with Holm's correction across it, and the effect its queries can detect."""

from __future__ import annotations

import math

from crmatrix import CrmatrixError
from crmatrix.analysis import stats
from crmatrix.analysis.cells import METRIC


def moved(cell: dict) -> bool:
    return cell["improved"] + cell["regressed"] > 0


def significant(cell: dict) -> bool:
    return cell["p_holm"] is not None and cell["p_holm"] < stats.ALPHA


def _identical_to(docs: dict, arms: list[str]) -> dict[str, str]:
    """arm -> the first arm, in column order, whose per-query results it repeats exactly."""
    first: dict[str, str] = {}
    out = {}
    for arm in (a for a in arms if a in docs):
        out[arm] = first.setdefault(docs[arm]["answers"], arm)
    return {a: same for a, same in out.items() if same != a}


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
        if ("p_randomization" in cell and same != baseline and moved(cell)
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
            cell["p_holm"] = 1.0 if same == baseline or not moved(cell) else adjusted.get(same)
    return family


def _detectable(cells: dict, family: list[str], n: int, base_mean: float | None) -> dict:
    """The row's minimum detectable effect: its family's pooled per-query sd of differences, at
    the Bonferroni level alpha/m that bounds Holm's first step, with 80 % power; and for each
    compared cell the queries its Δ would need at that level. A flat Δ (under 1 % of the
    baseline, the band the matrix calls no effect) needs none: detecting it would tell nothing,
    and a Δ of rounding noise would ask for
    millions of queries."""
    alpha = stats.ALPHA / max(len(family), 1)
    sd = math.sqrt(sum(cells[a]["sd_diff"] ** 2 for a in family) / len(family)) if family else None
    mde = stats.detectable_effect(sd, n, alpha) if family else None
    for cell in cells.values():
        if "sd_diff" in cell:
            cell["queries_needed"] = (None if cell["band"] == "flat"
                                      else stats.queries_needed(cell["sd_diff"], cell["delta_abs"], alpha))
    return {"abs": mde, "rel": mde / base_mean if mde is not None and base_mean else None, "sd_diff": sd,
            "alpha": alpha, "power": stats.POWER, "n": n}


def _check_baseline(docs: dict, baseline: str) -> None:
    for arm, doc in docs.items():
        if doc["baseline"] not in (None, baseline):
            raise CrmatrixError(f"cell {doc['dataset']}/{doc['system']}/{arm}: compared with arm {doc['baseline']!r}, "
                                f"expected the matrix's baseline {baseline!r}")


def row(dataset: str, system: str, docs: dict[str, dict], arms: list[str], baseline: str, archetype: str | None,
        split: str | None = None, comparisons: list[str] | None = None) -> dict:
    """`docs`: arm -> its cell's statistics, in the order the cells came (the first stands for the
    row when the baseline's is missing)."""
    _check_baseline(docs, baseline)
    head = docs.get(baseline) or next(iter(docs.values()))
    present = [a for a in arms if a in docs]
    cells = {a: dict(docs[a]["cell"]) for a in present}
    same = _identical_to(docs, arms)
    for arm, cell in cells.items():
        cell["identical_to"] = same.get(arm)
    family = _correct(cells, baseline, comparisons)
    n = cells[present[0]]["n"]
    return {"dataset": dataset, "system": system, "method": head["method"], "corpus": head["corpus"],
            "language": head["language"], "archetype": archetype, "split": split, "n": n,
            "family": family, "detectable": _detectable(cells, family, n, cells.get(baseline, {}).get(METRIC)),
            "cells": cells,
            "decomposition": {a: docs[a]["decomposition"] for a in present if docs[a]["decomposition"] is not None},
            # in the categories' own order: a cell file holds them sorted by name
            "hybrid_diagnostics": {a: {k: docs[a]["hybrid_diagnostics"][k] for k in stats.HYBRID_CATEGORIES}
                                   for a in present if docs[a]["hybrid_diagnostics"]},
            "token_efficiency": head["token_efficiency"]}
