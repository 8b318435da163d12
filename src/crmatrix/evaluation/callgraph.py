"""Call-graph quality: a system's `callers` / `callees` answers against gold call edges.

A system answers through an optional `calls(direction, symbol, file_suffix)` member that
returns (name, path) pairs; the builtin engine answers from the corpus's graph. Per task,
recall is the share of gold edges answered and precision the share of answers that are
gold edges (an answer matches when its name is the gold name and its path ends with the
gold file suffix; callees are gold by name alone). A task the system cannot answer is
recorded with its error and scores 0, like a failed search query.
"""

from __future__ import annotations

import numpy as np

from crmatrix import atomic
from crmatrix.datasets.tasks import Task

DIRECTIONS = ("callers", "callees")


def _matches(answer: tuple[str, str], gold: list) -> bool:
    name, path = answer
    return any(name == g_name and path.endswith(g_suffix) for g_name, g_suffix in gold)


def score(answers: list[tuple[str, str]], gold: list) -> dict:
    found = sum(any(_matches(a, [g]) for a in answers) for g in gold)
    correct = sum(_matches(a, gold) for a in answers)
    recall = found / len(gold) if gold else 0.0
    precision = correct / len(answers) if answers else 0.0
    f1 = 2 * recall * precision / (recall + precision) if recall + precision else 0.0
    return {"recall": recall, "precision": precision, "f1": f1}


def evaluate(system, tasks: list[Task]) -> dict:
    """Per direction: mean recall, precision and F1 over its tasks, and one row per task."""
    rows = []
    for t in tasks:
        gold = t.gold["answers"]
        try:
            if not system.ANSWERS_CALLS:
                raise NotImplementedError("the system answers no call-graph questions (no `calls` member)")
            answers = [tuple(a) for a in system.calls(t.query_type, t.gold["symbol"], t.gold["file_suffix"])]
            error = None
        except Exception as e:
            answers, error = [], f"{type(e).__name__}: {e}"
        rows.append({"task_id": t.task_id, "direction": t.query_type, "symbol": t.gold["symbol"],
                     "gold": gold, "answers": [list(a) for a in answers], **score(answers, gold), "error": error})
    out = {}
    for direction in DIRECTIONS:
        mine = [r for r in rows if r["direction"] == direction]
        out[direction] = {"n": len(mine), "errors": sum(bool(r["error"]) for r in mine),
                          **{m: float(np.mean([r[m] for r in mine])) if mine else 0.0
                             for m in ("recall", "precision", "f1")}}
    return {"directions": out, "tasks": rows}


def to_markdown(runs: list[dict]) -> str:
    lines = ["# Call-graph quality — callers and callees against gold edges", "",
             "Mean per task: recall (gold edges answered), precision (answers that are gold edges), F1.", "",
             "| dataset | system | direction | n | recall | precision | F1 | errors |",
             "|---|---|---|---:|---:|---:|---:|---:|"]
    for run in sorted(runs, key=lambda r: (r["dataset"], r["system"])):
        for direction, m in run["result"]["directions"].items():
            lines.append(f"| {run['dataset']} | {run['system']} | {direction} | {m['n']} | {m['recall']:.3f} | "
                         f"{m['precision']:.3f} | {m['f1']:.3f} | {m['errors']} |")
    return "\n".join(lines) + "\n"


def write_report(runs: list[dict], json_path, md_path) -> None:
    atomic.write_json(json_path, {"runs": sorted(runs, key=lambda r: (r["dataset"], r["system"]))})
    atomic.write_text(md_path, to_markdown(runs))
