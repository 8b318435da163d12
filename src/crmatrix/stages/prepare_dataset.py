"""prepare_dataset: a dataset file loaded and checked against its corpus, as tasks, TREC
qrels and a summary of what the loader dropped (counts by reason, each drop; also logged)."""

from __future__ import annotations

import logging
from pathlib import Path

from crmatrix import atomic, datasets, trec
from crmatrix.datasets import Task
from crmatrix.symbols import read_symbols

log = logging.getLogger(__name__)


def write_summary(path: Path | None, loaded: datasets.Loaded, fmt: str) -> None:
    """Log every drop with its reason, and write the summary the matrix shows."""
    summary = loaded.summary(fmt)
    log.info("%d tasks, %d dropped%s", summary["tasks"], summary["dropped"],
             "".join(f"; {n} {r}" for r, n in summary["dropped_by_reason"].items()))
    for d in summary["drops"]:
        log.info("dropped row %s: %s: %s", d["row"], d["reason"], d["detail"])
    if path is not None:
        atomic.write_json(Path(path), summary)


def run(file: Path, fmt: str, corpus_name: str, manifest: Path, symbols: Path, out: Path,
        qrels: Path | None = None, summary: Path | None = None) -> list[Task]:
    syms = read_symbols(symbols)
    loaded = datasets.load_all(Path(file), fmt, corpus_name, atomic.read_json(manifest), syms)
    atomic.write_jsonl(Path(out), [t.to_dict() for t in loaded.tasks])
    if qrels is not None:
        trec.write_qrels(Path(qrels), datasets.qrels(loaded.tasks, syms))
    write_summary(summary, loaded, fmt)
    return loaded.tasks
