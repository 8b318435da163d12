"""prepare_dataset: a dataset file loaded and checked against its corpus, narrowed to its split
(crmatrix.holdout), as tasks and TREC qrels."""

from __future__ import annotations

from pathlib import Path

from crmatrix import atomic, datasets, holdout, trec
from crmatrix.datasets import Task
from crmatrix.symbols import read_symbols


def run(file: Path, fmt: str, corpus_name: str, manifest: Path, symbols: Path, out: Path,
        qrels: Path | None = None, split: str = "all", seed: int | None = None) -> list[Task]:
    syms = read_symbols(symbols)
    tasks = datasets.load(Path(file), fmt, corpus_name, atomic.read_json(manifest), syms)
    tasks = holdout.select(tasks, split, holdout.DEFAULT_SEED if seed is None else seed, str(file))
    atomic.write_jsonl(Path(out), [t.to_dict() for t in tasks])
    if qrels is not None:
        trec.write_qrels(Path(qrels), datasets.qrels(tasks, syms))
    return tasks
