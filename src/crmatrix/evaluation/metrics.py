"""Per-query rank metrics with binary relevance, defined as trec_eval / ir_measures define them.

Each query row carries `relevant_ranks` (sorted 1-based ranks of every relevant hit
returned; its first entry is the row's `rank`) and `n_relevant` (relevant items in the
corpus). Every metric is a function of one row, so per-query values feed the paired tests
in `stats` and means feed the tables.

A row whose gold is finer than files also carries `file_level` (its `rank`, `relevant_ranks`
and `n_relevant` with the hits ranked as files: `file_row`), scored by the same functions.

Localization (SWE-bench) adds the field's two Acc@k (`LOCALIZATION`), which differ on a task
with more gold items than k: SweRank's `acc_all@k`, every relevant item within the top k
(`all_at`), and LocAgent's `acc_locagent@k`, min(n_relevant, k) of them (`locagent_at`). Not
part of every run's summary: a format asks for them.

Two deliberate choices where tools differ:
- A query with no relevant hit in the run is a row scoring 0, never a dropped query
  (trec_eval and ir_measures omit queries absent from the run, which inflates means).
- A query with `n_relevant` 0 scores 0 on every metric: there is nothing to find, and
  ranks of "relevant" hits the corpus does not hold cannot be normalised.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial

import numpy as np


def _within(row: dict, k: int | None) -> list[int]:
    """Ranks of the relevant hits within the top k (all for k None), none when the corpus holds
    nothing relevant. A list, not an array: a row's handful of ranks is read by every metric of
    every query, where building an array cost more than the metric."""
    ranks = row["relevant_ranks"] if row["n_relevant"] else []
    return ranks if k is None else [r for r in ranks if r <= k]


def reciprocal_rank(row: dict, k: int | None = None) -> float:
    ranks = _within(row, k)
    return 1.0 / ranks[0] if ranks else 0.0


def hit_at(row: dict, k: int | None = None) -> float:
    """1 when a relevant hit is within the top k (anywhere in the returned list for k None)."""
    return 1.0 if _within(row, k) else 0.0


def all_at(row: dict, k: int) -> float:
    """1 when EVERY relevant item is within the top k: SweRank's Acc@k (`topk_accuracy` of
    src/evaluations/eval_localization.py: the gold set a subset of the top k), file level for a
    `file_set` gold (files ranked at their first hit) and function level for a `definitions`
    gold. It counts relevant ranks, so it takes each relevant item to be ranked once: files
    always are (crmatrix.datasets.relevance.ranked_units), symbols are unless a system answers
    one twice."""
    n = row["n_relevant"]
    return 1.0 if n and len(_within(row, k)) >= n else 0.0


def locagent_at(row: dict, k: int) -> float:
    """1 when the top k holds min(n_relevant, k) relevant items: LocAgent's `acc_at_k`
    (utils/eval_metric.py: the relevant hits among the first k predictions equal the gold items
    among the first k places of an ideal list). It equals `all_at` when k >= n_relevant and is
    looser below it: a task of three gold files scores 1 at k=1 when its first hit is gold."""
    n = row["n_relevant"]
    return 1.0 if n and len(_within(row, k)) >= min(n, k) else 0.0


def precision_at(row: dict, k: int) -> float:
    return len(_within(row, k)) / k


def recall_at(row: dict, k: int) -> float:
    return len(_within(row, k)) / row["n_relevant"] if row["n_relevant"] else 0.0


def ndcg_at(row: dict, k: int) -> float:
    """Gain 1, discount log2(rank + 1); the ideal list holds min(n_relevant, k) relevant items."""
    ranks = np.asarray(_within(row, k), dtype=float)
    if not ranks.size:
        return 0.0
    ideal = np.arange(1, min(row["n_relevant"], k) + 1)
    return float(np.sum(1.0 / np.log2(ranks + 1)) / np.sum(1.0 / np.log2(ideal + 1)))


def average_precision(row: dict, k: int | None = None) -> float:
    """Precision at each relevant hit's rank, summed and divided by all relevant items (trec_eval's map_cut)."""
    ranks = np.asarray(_within(row, k), dtype=float)
    if not ranks.size:
        return 0.0
    return float(np.sum(np.arange(1, ranks.size + 1) / ranks) / row["n_relevant"])


METRICS: dict[str, Callable[[dict], float]] = {
    "mrr": reciprocal_rank,
    "mrr@10": partial(reciprocal_rank, k=10),
    "acc@1": partial(hit_at, k=1),
    "acc@3": partial(hit_at, k=3),
    "acc@5": partial(hit_at, k=5),
    "precision@1": partial(precision_at, k=1),
    "recall@5": partial(recall_at, k=5),
    "recall@10": partial(recall_at, k=10),
    "recall@100": partial(recall_at, k=100),
    "ndcg@10": partial(ndcg_at, k=10),
    "map": average_precision,
    "map@10": partial(average_precision, k=10),
    "coverage": hit_at,
}


# Localization's Acc@k, SweRank's then LocAgent's at the same k (SweRank's file level reports
# k = 1, 3, 5, 10, its function level 5 and 10; LocAgent's file level 1, 2, 3, 5, function 3, 5, 10).
LOCALIZATION_K = (1, 3, 5, 10)
LOCALIZATION: dict[str, Callable[[dict], float]] = {
    **{f"acc_all@{k}": partial(all_at, k=k) for k in LOCALIZATION_K},
    **{f"acc_locagent@{k}": partial(locagent_at, k=k) for k in LOCALIZATION_K}}
_ANY = {**METRICS, **LOCALIZATION}
# A run's file-level metrics (`MethodResult.file_metrics`): every metric, Acc@k among them.
FILE_METRICS = (*METRICS, *LOCALIZATION)


def file_row(row: dict) -> dict:
    """A query row at file level: its `file_level` part (its hits ranked as files against its
    gold's files), or the row itself when its gold is files already."""
    level = row.get("file_level")
    return row if level is None else level


# What a blob answer (one composed context, not a ranked list) can be scored on: its one
# "rank" is 1, so these equal its hit rate, and every deeper metric would be a misleading echo.
RANK1_METRICS = ("mrr", "mrr@10", "acc@1", "precision@1")


def rank1_only(summary: dict) -> dict:
    """A summary with every metric beyond rank 1 set to None (null in the run JSON)."""
    return {k: v if k == "n" or k in RANK1_METRICS else None for k, v in summary.items()}


def per_query(rows: list[dict], metric: str) -> np.ndarray:
    """One value per row, in row order (of a metric of METRICS or LOCALIZATION)."""
    f = _ANY[metric]
    return np.fromiter((f(r) for r in rows), dtype=float, count=len(rows))


def summarize(rows: list[dict], names: Iterable[str] = tuple(METRICS)) -> dict:
    """Mean of every metric (or of `names`, from METRICS or LOCALIZATION) over rows (an empty set
    gives zeros with n=0, never a division error)."""
    out: dict = {"n": len(rows)}
    for name in names:
        out[name] = float(per_query(rows, name).mean()) if rows else 0.0
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
