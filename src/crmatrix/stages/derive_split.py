"""derive_split: a split dataset (`split:` in its config), its tasks derived from the file's
with the corpus's graph and the baseline arm's dense ranker (`crmatrix.datasets.splits`), as tasks
and TREC qrels. Its own stage so that plain datasets do not depend on the engine's code."""

from __future__ import annotations

from pathlib import Path

from crmatrix import atomic, graph
from crmatrix.config.settings import KnobSpec
from crmatrix.corpora.languages import dominant_language
from crmatrix.datasets import registry, relevance, splits
from crmatrix.datasets.tasks import Task
from crmatrix.embed.queries import query_encoder
from crmatrix.engine import Engine, index
from crmatrix.evaluation import trec
from crmatrix.stages import prepare_dataset
from crmatrix.symbols import read_symbols


def run(*, file: Path, fmt: str, split: str, corpus_name: str, manifest: Path, symbols: Path, graph_file: Path,
        index_dir: Path, model: Path, knobs: dict, cache_dir: Path, out: Path, qrels: Path | None = None,
        threads: int | None = None, summary: Path | None = None) -> list[Task]:
    """`knobs`: the dense ranker's arm's knobs as the plan parsed them (`Plan.split_ranker`, a
    `KnobSpec`), settled here on the corpus's dominant language."""
    syms = read_symbols(symbols)
    man = atomic.read_json(manifest)
    loaded = registry.load_all(Path(file), fmt, corpus_name, man, syms)
    base = loaded.tasks
    kn = KnobSpec.from_json(knobs, "derive_split: knobs").arm_knobs({}).knobs(dominant_language(man))
    vectors, _ = index.load(Path(index_dir), syms, kn, Path(model))
    dense = Engine(syms, kn, vectors, query_encoder(Path(model), Path(cache_dir), threads))
    tasks = splits.derive(split, base, syms, graph.read(Path(graph_file), syms), dense, str(file))
    atomic.write_jsonl(Path(out), [t.to_dict() for t in tasks])
    if qrels is not None:
        trec.write_qrels(Path(qrels), relevance.qrels(tasks, syms))
    prepare_dataset.write_summary(summary, registry.Loaded(tasks, loaded.dropped), fmt)
    return tasks
