"""An arm against the baseline on the same queries, as the readers of a finished run state it
(benchmarks/swe_bench.py per benchmark, arms_by_language.py per language): one method's metric,
each query paired with itself across the two arms' runs of the same datasets, the difference's
mean with its 95 % bootstrap interval (`crmatrix.analysis.stats.paired_bootstrap_delta`)."""

from __future__ import annotations

from collections.abc import Iterable

from crmatrix.analysis import stats
from crmatrix.evaluation import metrics


def delta(baseline: Iterable[dict], arm: Iterable[dict], method: str, metric: str = "mrr") -> dict:
    """`metric`'s paired difference (arm − baseline) of `method` over the baseline runs' queries,
    each matched with the arm's run of its dataset by task id; `n` the pairs. An arm that lacks a
    dataset or a query of the baseline's is one error naming it."""
    theirs = {(r["dataset"], q["task_id"]): q for r in arm for q in r["methods"][method]["queries"]}
    base, other = [], []
    for r in sorted(baseline, key=lambda r: r["dataset"]):
        for q in r["methods"][method]["queries"]:
            key = (r["dataset"], q["task_id"])
            if key not in theirs:
                raise SystemExit(f"{r['dataset']}: query {q['task_id']} of the baseline has no run of the arm's")
            base.append(q)
            other.append(theirs[key])
    d = stats.paired_bootstrap_delta(metrics.per_query(base, metric), metrics.per_query(other, metric))
    return {**d, "n": len(base)}


def cell(d: dict) -> str:
    """A difference as the reports print it: `+0.057 [+0.026, +0.091]`."""
    return f"{d['delta']:+.3f} [{d['ci_low']:+.3f}, {d['ci_high']:+.3f}]"


def verdict(d: dict) -> str:
    """better or worse when the interval leaves out 0, else flat."""
    return "better" if d["ci_low"] > 0 else "worse" if d["ci_high"] < 0 else "flat"
