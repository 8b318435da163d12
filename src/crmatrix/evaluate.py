"""Running one dataset against one system under one arm, and scoring every method."""

from __future__ import annotations

import time

from crmatrix import CrmatrixError, metrics
from crmatrix.datasets import Task, is_relevant, relevant_symbols
from crmatrix.hits import Hit
from crmatrix.symbols import Symbol
from crmatrix.systems import System


def _query_row(task: Task, hits: list[Hit], n_relevant: int, elapsed_ms: float, error: str | None) -> dict:
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
        "error": error,
    }


def run_method(system: System, tasks: list[Task], symbols: list[Symbol], method: str, k: int) -> dict:
    """Score one method; a query that raises is a recorded failure (a miss with its message)."""
    rows = []
    for task in tasks:
        t0 = time.perf_counter()
        try:
            hits, error = system.search(task.query, method, k), None
        except Exception as e:  # noqa: BLE001 - any system crash is data, not a reason to lose the run
            hits, error = [], f"{type(e).__name__}: {e}"
        elapsed = (time.perf_counter() - t0) * 1000
        rows.append(_query_row(task, hits, len(relevant_symbols(task.gold, symbols)), elapsed, error))
    failed = [r for r in rows if r["error"]]
    if rows and len(failed) == len(rows):  # a system that fails every query is broken, not bad at search
        raise CrmatrixError(f"method {method}: every query failed; the first: {failed[0]['error']}")
    return {
        "metrics": metrics.summarize(rows),
        "by_query_type": metrics.by_query_type(rows),
        "latency_ms": metrics.latency([r["elapsed_ms"] for r in rows]),
        "errors": len(failed),
        "queries": rows,
    }


def evaluate(system: System, tasks: list[Task], symbols: list[Symbol], methods: list[str], k: int) -> dict:
    if hasattr(system, "prepare"):  # e.g. embed every query once, outside the timed searches
        system.prepare([t.query for t in tasks])
    return {m: run_method(system, tasks, symbols, m, k) for m in methods}
