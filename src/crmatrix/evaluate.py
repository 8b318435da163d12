"""Running one dataset against one system under one arm, and scoring every method.

Besides ranks, each query records what an agent would pay to read the answer: the bytes
and cl100k tokens of the first `RESPONSE_HITS` hits as JSON.
"""

from __future__ import annotations

import time

import numpy as np

from crmatrix import CrmatrixError, metrics
from crmatrix.atomic import dumps_canonical
from crmatrix.tokens import count_tokens
from crmatrix.datasets import Task, is_relevant, relevant_symbols
from crmatrix.hits import Hit, docid
from crmatrix.symbols import Symbol
from crmatrix.systems import System

RESPONSE_HITS = 10


def response_size(hits: list[Hit]) -> tuple[int, int]:
    text = dumps_canonical([h.to_dict() for h in hits[:RESPONSE_HITS]])
    return len(text.encode()), count_tokens(text)


def _query_row(task: Task, hits: list[Hit], n_relevant: int, elapsed_ms: float, error: str | None) -> dict:
    size = response_size(hits)
    relevant_ranks = [i for i, h in enumerate(hits, 1) if is_relevant(task.gold, h)]
    return {
        "task_id": task.task_id,
        "query": task.query,
        "query_type": task.query_type,
        "gold": task.gold,
        "rank": relevant_ranks[0] if relevant_ranks else None,
        "relevant_ranks": relevant_ranks,
        "n_relevant": n_relevant,
        "hits": len(hits),
        "top_candidate": hits[0].to_dict() if hits else None,
        "elapsed_ms": round(elapsed_ms, 3),
        "response_bytes": size[0],
        "response_tokens": size[1],
        "error": error,
    }


def _summary(values: list[float]) -> dict:
    a = np.asarray(values, dtype=float)
    return {"mean": float(a.mean()) if a.size else 0.0, "p95": float(np.percentile(a, 95)) if a.size else 0.0}


def run_method(system: System, tasks: list[Task], n_relevant: dict[str, int], method: str, k: int
               ) -> tuple[dict, dict[str, list[str]]]:
    """Score one method; a query that raises is a recorded failure (a miss with its message).
    `n_relevant` counts each task's relevant symbols in the corpus. Returns the method's
    results and its ranked docids per task, for the TREC run file."""
    rows, ranked = [], {}
    for task in tasks:
        t0 = time.perf_counter()
        try:
            hits, error = system.search(task.query, method, k), None
        except Exception as e:  # noqa: BLE001 - any system crash is data, not a reason to lose the run
            hits, error = [], f"{type(e).__name__}: {e}"
        elapsed = (time.perf_counter() - t0) * 1000
        ranked[task.task_id] = [docid(h) for h in hits]
        rows.append(_query_row(task, hits, n_relevant[task.task_id], elapsed, error))
    failed = [r for r in rows if r["error"]]
    if rows and len(failed) == len(rows):  # a system that fails every query is broken, not bad at search
        raise CrmatrixError(f"method {method}: every query failed; the first: {failed[0]['error']}")
    return {
        "metrics": metrics.summarize(rows),
        "by_query_type": metrics.by_query_type(rows),
        "latency_ms": metrics.latency([r["elapsed_ms"] for r in rows]),
        "response_bytes": _summary([r["response_bytes"] for r in rows]),
        "response_tokens": _summary([r["response_tokens"] for r in rows]),
        "errors": len(failed),
        "queries": rows,
    }, ranked


def evaluate(system: System, tasks: list[Task], symbols: list[Symbol], methods: list[str], k: int
             ) -> tuple[dict, dict[str, dict[str, list[str]]], float]:
    """Results per method, ranked docids per method and task, and the seconds spent preparing."""
    if hasattr(system, "prepare"):  # e.g. embed every query once, outside the timed searches
        t0 = time.perf_counter()
        system.prepare([t.query for t in tasks])
        prepare_s = time.perf_counter() - t0
    else:
        prepare_s = 0.0
    n_relevant = {t.task_id: len(relevant_symbols(t.gold, symbols)) for t in tasks}  # the same for every method
    results, ranked = {}, {}
    for m in methods:
        results[m], ranked[m] = run_method(system, tasks, n_relevant, m, k)
    return results, ranked, round(prepare_s, 3)
