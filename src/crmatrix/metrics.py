"""Rank metrics over per-query results; a query with no relevant hit in the run scores 0.

Each query row carries `rank` (1-based rank of the first relevant hit, None if none
within the scored depth), `relevant_ranks` and `n_relevant` (relevant items in the corpus).
"""

from __future__ import annotations

import numpy as np

ACC_KS = (1, 3, 5)
RECALL_K = 10


def reciprocal_rank(row: dict) -> float:
    return 1.0 / row["rank"] if row.get("rank") else 0.0


def hit_at(row: dict, k: int) -> float:
    return 1.0 if row.get("rank") and row["rank"] <= k else 0.0


def recall_at(row: dict, k: int) -> float:
    n = row.get("n_relevant") or 0
    return sum(r <= k for r in row.get("relevant_ranks", [])) / n if n else 0.0


def summarize(rows: list[dict]) -> dict:
    """Mean metrics over rows (an empty set gives zeros with n=0, never a division error)."""
    n = len(rows)

    def mean(f) -> float:
        return float(sum(f(r) for r in rows) / n) if n else 0.0

    out = {"n": n, "mrr": mean(reciprocal_rank)}
    for k in ACC_KS:
        out[f"acc@{k}"] = mean(lambda r, k=k: hit_at(r, k))
    out[f"recall@{RECALL_K}"] = mean(lambda r: recall_at(r, RECALL_K))
    return out


def by_query_type(rows: list[dict]) -> dict:
    groups: dict[str, list[dict]] = {}
    for r in rows:
        groups.setdefault(r["query_type"], []).append(r)
    return {qt: summarize(g) for qt, g in sorted(groups.items())}


def latency(ms: list[float]) -> dict:
    if not ms:
        return {"p50": 0.0, "p95": 0.0, "p99": 0.0}
    a = np.asarray(ms, dtype=float)
    return {f"p{p}": round(float(np.percentile(a, p)), 3) for p in (50, 95, 99)}
