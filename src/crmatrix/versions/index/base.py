"""What a versioned index of symbols and one of whole files share: the key of the bases they grow
from (`code_key`, `build_key`), the parts a build takes from its base (`Base`), and the distinct
embedding texts and their vectors (`write_texts`)."""

from __future__ import annotations

import functools
import importlib.metadata
from pathlib import Path

import numpy as np

from crmatrix import CrmatrixError, atomic, codehash
from crmatrix.embed.cache import text_sha
from crmatrix.engine import index
from crmatrix.versions.grown import Grown
from crmatrix.versions.index import columns, postings, termcounts

# A repository's index (rule build_repository_index): the symbols' part and the whole files' part
SYMBOL_INDEX, FILE_INDEX = "symbols", "files"


@functools.cache
def code_key() -> str:
    """What an index's rows depend on besides their contents, the knobs and the model: the code
    the versioned index runs (`crmatrix.versions.index` and all it imports: tokenizing,
    embedding texts, lexical fields, words, the symbol record), followed through its imports
    rather than listed by hand, and the versions of the tokenizer's libraries."""
    return atomic.hash_obj({"code": codehash.module_hash("crmatrix.versions.index"),
                            "versions": [importlib.metadata.version(d) for d in ("bm25s", "PyStemmer", "numpy")]})


def build_key(model_sha: str | None, fields: dict | None = None) -> str:
    """The key of the bases (`crmatrix.versions.bases`) an index grows from: its code, model (None: an
    index without vectors) and knob fields (`Knobs.index_fields`; a file index's:
    `Knobs.tokenizer_fields`, or None)."""
    return atomic.hash_obj([code_key(), model_sha, fields])[:16]


class Base:
    """The parts a build takes from its base: a previous build's, checked to be one it can grow
    from (the same format and model), or empty ones when there is none."""

    def __init__(self, directory: Path | None, what: str, form: str, model_dir: Path | None):
        self.directory = Path(directory) if directory is not None else None
        self.meta = read_meta(self.directory, what, form) if self.directory else None
        if self.meta is not None:
            check_model(self.directory, self.meta, model_dir)

    def __bool__(self) -> bool:
        return self.directory is not None

    def array(self, name: str, dtype) -> np.ndarray:
        return np.load(self.directory / name) if self else np.zeros(0, dtype=dtype)

    def json(self, name: str, load=atomic.read_json) -> list:
        return load(self.directory / name) if self else []

    def strings(self, name: str) -> list[str]:
        return columns.Column(self.directory / "lexical", name).strings() if self else []

    def postings(self, name: str, at: np.ndarray) -> list[postings.Part]:
        return [postings.Postings(self.directory / name).part().renumbered(at)] if self else []

    def counts(self, rows: int) -> termcounts.TermCounts | None:
        return termcounts.TermCounts(self.directory / "bm25", rows) if self else None


def write_texts(d: Path, rows: Grown, base: Base, new: list[str], model_dir: Path | None, cache_dir: Path,
                threads: int | None, rows_file: str) -> tuple[int, dict | None, dict]:
    """Write each row's embedding text into `d`: the distinct texts in the order the rows first
    hold them (`texts.jsonl`), their vectors (`vectors.npy`) and each row's text (`rows_file`).
    A base row's text is the one the `base` index's `rows_file` gives its row; a new row's,
    `new[row]`, embedded through the cache unless the base holds it. Returns (distinct texts,
    the model, the embedding stats); with no model (`model_dir` None: the system ranks by no
    vectors, and its bases hold none) writes nothing and returns (0, None, no stats)."""
    if model_dir is None:
        return 0, None, {}
    base_texts = base.array(rows_file, np.int32)
    old = base.json("texts.jsonl", atomic.read_jsonl)
    known = {t["text_sha"]: i for i, t in enumerate(old)}
    fresh: list[dict] = []
    new_ids = []
    for text in new:
        sha = text_sha(text)
        i = known.get(sha)
        if i is None:
            i = known[sha] = len(old) + len(fresh)
            fresh.append({"text_sha": sha, "text": text})
        new_ids.append(i)
    text = rows.take(np.asarray(base_texts, dtype=np.int64), np.asarray(new_ids, dtype=np.int64))
    distinct, first = np.unique(text, return_index=True)
    order = distinct[np.argsort(first, kind="stable")]
    row = np.full(len(old) + len(fresh), -1, dtype=np.int64)
    row[order] = np.arange(len(order))
    vectors, model, stats = index.embed([t["text"] for t in fresh], model_dir, cache_dir, threads)
    old_vectors = index.load_vectors(base.directory, len(old), model["dim"]) if base else np.zeros((0, model["dim"]))
    vectors = np.concatenate([old_vectors, vectors.reshape(len(fresh), model["dim"])]).astype(np.float32)
    np.save(d / "vectors.npy", vectors[order])
    np.save(d / rows_file, row[text].astype(np.int32))
    atomic.write_jsonl(d / "texts.jsonl", [(old[i] if i < len(old) else fresh[i - len(old)]) for i in order.tolist()])
    return len(order), model, {**stats, "reused": int((order < len(old)).sum())}


def check_model(directory: Path, meta: dict, model_dir: Path | None) -> dict | None:
    """The description of the model an index's vectors were embedded with, checked to be
    `model_dir`'s (`index.check_model`); None for an index without vectors, opened without a
    model. One with vectors opened without a model, or the reverse, is refused."""
    if (meta["model"] is None) != (model_dir is None):
        held = "no vectors" if meta["model"] is None else "vectors"
        wanted = "ranks by none (no model)" if model_dir is None else f"ranks by those of {model_dir}"
        raise CrmatrixError(f"{directory}: holds {held}, but the system {wanted}; delete it and run again")
    return None if model_dir is None else index.check_model(directory, meta, model_dir)


def read_meta(directory: Path, what: str, form: str) -> dict:
    meta = index.read_meta(directory, what)
    if meta.get("format") != form:
        raise CrmatrixError(f"{directory}: format {meta.get('format')!r}, expected {form!r}; delete it and run again")
    return meta

