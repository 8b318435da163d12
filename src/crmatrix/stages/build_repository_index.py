"""build_repository_index: the builtin engine's index of every commit of a repository corpus
under one arm's index-time knobs, from its store of distinct symbol contents, and, for the
file methods, its distinct files as documents; each part grown from the previous one of the
same knobs, model and code (crmatrix.versions.bases), and each distinct embedding text embedded once
ever (the embedding cache)."""

from __future__ import annotations

import contextlib
import re
from pathlib import Path
from typing import Any

import numpy as np

from crmatrix import atomic
from crmatrix.corpora.languages import dominant_language
from crmatrix.corpora.pins.gitstore import BlobReader
from crmatrix.embed.models import read_model
from crmatrix.engine.knobs import settle
from crmatrix.versions import bases
from crmatrix.versions import index as versioned
from crmatrix.versions.repository import GIT, MANIFEST, commit_files
from crmatrix.versions.store import SymbolStore

SYMBOLS, FILES = "indexes", "file-indexes"  # the kinds of bases
_BLOB = re.compile(rb'"blob":\s*"([0-9a-f]+)"')


def doc_blobs(file_index: Path) -> set[bytes]:
    """The blob ids of a file index's documents, found in its bytes: every build scores each kept
    file index (`bases.pick`), and parsing their JSON lines was most of a small added commit."""
    return set(_BLOB.findall((Path(file_index) / "docs.jsonl").read_bytes()))


def run(*, repository: Path, store: Path, model_dir: Path | None, knobs: dict[str, Any], cache_dir: Path, out: Path,
        files: bool, threads: int | None = None) -> dict:
    """`knobs`: the index's fields (`crmatrix.config.plan.Plan.index_knobs`), settled here on the
    repository's dominant language; `model_dir`: the model its vectors are embedded with (None:
    no vectors, for a system that ranks by none; its other parts are the same bytes, and its
    bases a kind of their own by the key, since they hold no vectors to grow from); `files`:
    whether to index whole files too."""
    kn = settle(knobs, dominant_language(atomic.read_json(Path(repository) / MANIFEST)))
    symbols = SymbolStore(Path(store))
    model_dir = Path(model_dir) if model_dir is not None else None
    model = read_model(model_dir)["sha256"] if model_dir is not None else None
    keys = set(map(bytes, symbols.keys()))
    key = versioned.build_key(model, kn.index_fields())
    with contextlib.ExitStack() as picked, atomic.staged_dir(Path(out)) as d:  # the bases held until built
        base = picked.enter_context(bases.pick(cache_dir, SYMBOLS, key, len(keys), lambda b: len(
            keys.intersection(map(bytes, np.load(b / versioned.KEYS))))))
        grown = {versioned.SYMBOL_INDEX: (SYMBOLS, key, base)}  # each part: its kind of bases, key, base
        meta = {versioned.SYMBOL_INDEX: versioned.build(symbols, kn, model_dir, Path(cache_dir),
                                                        d / versioned.SYMBOL_INDEX, threads, base)}
        if files:
            commits = commit_files(repository)
            docs = {pb for pairs in commits.values() for pb in pairs}
            key = versioned.build_key(model, kn.tokenizer_fields() or None)
            blobs = {blob.encode() for _, blob in docs}
            base = picked.enter_context(bases.pick(cache_dir, FILES, key, len(docs),
                                                   lambda b: len(blobs.intersection(doc_blobs(b)))))
            grown[versioned.FILE_INDEX] = (FILES, key, base)
            with BlobReader(Path(repository) / GIT) as reader:
                meta[versioned.FILE_INDEX] = versioned.build_files(
                    commits, lambda path, blob: reader.read(blob), model_dir, Path(cache_dir),
                    d / versioned.FILE_INDEX, threads, base, kn)
    for part, (kind, key, base) in grown.items():
        built = meta[part]
        kept = bases.keep(Path(out) / part, cache_dir, kind, key, built["name"])
        if kept and base and built["grown"]["superseded"]:
            bases.retire(base)  # after the block: its lock is let go
    return meta
