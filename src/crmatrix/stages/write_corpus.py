"""write_corpus: a corpus written out of a benchmark file by its dataset format (a RepoQA
repository's content, DS-1000's docs datastore), narrowed by the corpus's globs, as a tree
and its manifest, as fetch_corpus keeps a fetched one."""

from __future__ import annotations

from pathlib import Path

from crmatrix import CrmatrixError, atomic
from crmatrix.corpora import pins
from crmatrix.datasets import registry
from crmatrix.stages import fetch_corpus


def run(name: str, corpus: dict, file: Path, tree: Path, manifest_path: Path) -> dict:
    """`file`: the benchmark file (the workflow's input; the corpus's entry then need not name it)."""
    fmt = registry.written_by(corpus)
    if fmt is None:
        raise CrmatrixError(f"corpora.{name}: needs one of {', '.join(registry.corpus_kinds())} "
                            "(a corpus written out of a benchmark file)")
    corpus = {**corpus, fmt.corpus_kind: {**corpus[fmt.corpus_kind], "file": str(file)}}
    pin = pins.Pin.from_config(name, corpus, (fmt.corpus_kind,))
    with atomic.scratch_dir(Path(tree)) as scratch:
        origin = fmt.write_corpus(pin.spec[fmt.corpus_kind], scratch)
        return fetch_corpus.keep(name, corpus, pin, scratch, origin, tree, manifest_path, fmt.documents)
