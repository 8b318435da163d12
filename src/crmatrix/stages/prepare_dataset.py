"""prepare_dataset: a dataset file loaded and checked against its corpus, sampled (a derived
dataset's max_queries) and narrowed to its split (crmatrix.datasets.holdout), as tasks, TREC qrels
and a summary of what the loader dropped (counts by reason, each drop; also logged)."""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path

from crmatrix import atomic
from crmatrix.datasets import holdout, registry, relevance
from crmatrix.datasets.tasks import Task
from crmatrix.evaluation import trec
from crmatrix.symbols import read_symbols

log = logging.getLogger(__name__)


def write_summary(path: Path | None, loaded: registry.Loaded, fmt: str, sampled: dict | None = None) -> None:
    """Log every drop with its reason, and write the summary the matrix shows. `sampled`: how
    the tasks were sampled from the loader's ({max_queries, seed, candidates, sampled})."""
    summary = {**loaded.summary(fmt), **({"sample": sampled} if sampled else {})}
    if sampled:
        log.info("sampled %d of %d tasks (max_queries %d, seed %d)", sampled["sampled"], sampled["candidates"],
                 sampled["max_queries"], sampled["seed"])
    log.info("%d tasks, %d dropped%s", summary["tasks"], summary["dropped"],
             "".join(f"; {n} {r}" for r, n in summary["dropped_by_reason"].items()))
    if "gold" in summary:
        log.info("gold: %s", ", ".join(f"{k} {v}" for k, v in summary["gold"].items()))
    for d in summary["drops"]:
        log.info("dropped row %s: %s: %s", d["row"], d["reason"], d["detail"])
    if path is not None:
        atomic.write_json(Path(path), summary)


def run(file: Path, fmt: str, corpus_name: str, manifest: Path, symbols: Path, out: Path,
        qrels: Path | None = None, summary: Path | None = None, split: str = "all",
        seed: int | None = None, sample: dict | None = None, tree: Path | None = None) -> list[Task]:
    """`summary`: the drops and the count of tasks in the split. `sample`: {max_queries, seed}
    when the loader's tasks are sampled before the split (None: all of them). `tree`: the
    corpus's files, for a format that reads them."""
    syms = read_symbols(symbols)
    loaded = registry.load_all(Path(file), fmt, corpus_name, atomic.read_json(manifest), syms, tree)
    tasks, sampled = loaded.tasks, None
    if sample:
        tasks = holdout.sample(tasks, sample["max_queries"], sample["seed"], str(file))
        sampled = {**sample, "candidates": len(loaded.tasks), "sampled": len(tasks)}
    tasks = holdout.select(tasks, split, holdout.DEFAULT_SEED if seed is None else seed, str(file))
    atomic.write_jsonl(Path(out), [t.to_dict() for t in tasks])
    if qrels is not None:
        trec.write_qrels(Path(qrels), relevance.qrels(tasks, syms))
    write_summary(summary, replace(loaded, tasks=tasks), fmt, sampled)
    return tasks
