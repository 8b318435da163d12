"""build_repository_index: the builtin engine's index of every commit of a repository corpus
under one arm's index-time knobs, from its store of distinct symbol contents (each distinct
embedding text embedded once ever, through the embedding cache), and, for the file methods,
its distinct files as documents."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from crmatrix import atomic
from crmatrix.corpora.languages import dominant_language
from crmatrix.corpora.pins.gitstore import BlobReader
from crmatrix.corpora.repository import GIT, MANIFEST, commit_files
from crmatrix.engine import versioned
from crmatrix.engine.knobs import settle
from crmatrix.symbols.versioned import SymbolStore


def run(*, repository: Path, store: Path, model_dir: Path, knobs: dict[str, Any], cache_dir: Path, out: Path,
        files: bool, threads: int | None = None) -> dict:
    """`knobs`: the index's fields (`crmatrix.config.plan.Plan.index_knobs`), settled here on the
    repository's dominant language; `files`: whether to index whole files too."""
    kn = settle(knobs, dominant_language(atomic.read_json(Path(repository) / MANIFEST)))
    with atomic.staged_dir(Path(out)) as d:
        store_dir = d / versioned.SYMBOL_INDEX
        meta = {versioned.SYMBOL_INDEX: versioned.build(SymbolStore(Path(store)), kn, Path(model_dir), Path(cache_dir),
                                                        store_dir, threads)}
        if files:
            with BlobReader(Path(repository) / GIT) as reader:
                meta[versioned.FILE_INDEX] = versioned.build_files(
                    commit_files(repository), lambda path, blob: reader.read(blob), Path(model_dir), Path(cache_dir),
                    d / versioned.FILE_INDEX, threads)
    return meta
