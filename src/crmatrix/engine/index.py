"""The builtin engine's index of one corpus under one set of index-time knobs.

An index is the embedding text of every symbol and its vector, and the corpus's BM25
(`crmatrix.engine.bm25`), built once here rather than in every evaluation. Vectors come
from the content-addressed cache, keyed by (model sha256, text sha256), so an index whose
knobs leave most texts unchanged embeds only the texts that changed. An evaluation
memory-maps the arrays: they are never written after the build, and most of BM25's go unread.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from crmatrix import CrmatrixError, atomic, integrity
from crmatrix.embed.backends import load_embedder
from crmatrix.embed.cache import SUBDIR, EmbeddingCache, embed_with_cache, text_sha
from crmatrix.embed.models import read_model
from crmatrix.engine.bm25 import BM25Index
from crmatrix.engine.embedtext import embedding_text
from crmatrix.engine.knobs import Knobs, table
from crmatrix.symbols import Symbol, symbols_hash

BM25_DIR = "bm25"


def embed(texts: list[str], model_dir: Path, cache_dir: Path, threads: int | None = None
          ) -> tuple[np.ndarray, dict, dict]:
    """(the texts' vectors, the model's description, what was cached and embedded): through
    the cache, so a text is embedded once ever; the model is loaded only if a text is new."""
    model = read_model(model_dir)
    vectors, stats = embed_with_cache(texts, lambda: load_embedder(model, Path(model_dir), threads),
                                      model["sha256"], EmbeddingCache(Path(cache_dir) / SUBDIR))
    return vectors, model, stats


def build_bm25(symbols: list[Symbol], knobs: Knobs, into: Path) -> None:
    """The corpus's BM25, tokenized as `knobs` say, written into the directory `into`."""
    BM25Index.build(symbols, knobs).save(into)


def build(symbols: list[Symbol], knobs: Knobs, model_dir: Path, cache_dir: Path, out: Path,
          threads: int | None = None, bm25: Callable[[list[Symbol], Knobs, Path], None] = build_bm25) -> dict:
    """Build the index into `out`; `bm25` writes its BM25 (`build_bm25`'s bytes, however it gets them)."""
    t0 = time.perf_counter()
    texts = [embedding_text(s, knobs) for s in symbols]
    vectors, model, stats = embed(texts, model_dir, cache_dir, threads)
    stats["seconds"] = round(time.perf_counter() - t0, 3)
    # the index-time knobs only: the query-time ones of whichever arm built it are no part of it
    meta = {"model": model, "knobs": knobs.index_fields(), "symbols": len(symbols),
            "symbols_hash": symbols_hash(symbols), "embedding": stats}
    with atomic.staged_dir(Path(out)) as d:
        np.save(d / "vectors.npy", vectors.astype(np.float32))
        atomic.write_jsonl(d / "texts.jsonl", [{"path": s.path, "name": s.name, "start_line": s.start_line,
                                                "text_sha": text_sha(t), "text": t}
                                               for s, t in zip(symbols, texts, strict=True)])
        atomic.write_json(d / "meta.json", meta)
        bm25(symbols, knobs, d / BM25_DIR)
        integrity.record(d)
    return meta


def read_meta(index_dir: Path, what: str = "an index") -> dict:
    """The meta.json of an index directory, after verifying its checksums."""
    index_dir = Path(index_dir)
    meta_file = index_dir / "meta.json"
    if not meta_file.is_file():
        raise CrmatrixError(f"{index_dir}: not {what} (no meta.json)")
    integrity.verify(index_dir)
    return atomic.read_json(meta_file)


def check_knobs(index_dir: Path, meta: dict, knobs: Knobs) -> None:
    """Refuse an index built with other index-time knobs than the arm's (a tokenizer knob the
    meta does not name was at its default)."""
    built, wanted = table.index_fields(meta["knobs"]), knobs.index_fields()
    if built != wanted:
        known, keys = table.by_field(), {**built, **wanted}
        built, wanted = ({k: fields.get(k, known[k].default) for k in keys} for fields in (built, wanted))
        diff = ", ".join(f"{k}={built[k]} (wanted {wanted[k]})" for k in keys if built[k] != wanted[k])
        raise CrmatrixError(f"{index_dir}: built with other index-time knobs than the arm's: {diff}")


def check_model(index_dir: Path, meta: dict, model_dir: Path) -> dict:
    """Refuse an index built with another model than the arm's; returns the model's description."""
    model = read_model(model_dir)
    if meta["model"]["sha256"] != model["sha256"]:
        raise CrmatrixError(f"{index_dir}: built with model {meta['model']['sha256'][:12]}, but the arm's model "
                            f"{model_dir} is {model['sha256'][:12]}")
    return model


def load_vectors(index_dir: Path, rows: int, dim: int) -> np.ndarray:
    """The index's vectors.npy, memory-mapped, checked to hold `rows` vectors of `dim`."""
    path = Path(index_dir) / "vectors.npy"
    try:
        vectors = np.load(path, mmap_mode="r")
    except (OSError, ValueError) as e:
        raise CrmatrixError(f"{path}: unreadable ({e}); delete the index and run again") from None
    if vectors.shape != (rows, dim):
        raise CrmatrixError(f"{path}: shape {vectors.shape}, expected ({rows}, {dim}); delete the index and run again")
    return vectors


def load(index_dir: Path, symbols: list[Symbol], knobs: Knobs, model_dir: Path) -> tuple[np.ndarray, dict]:
    """The index's vectors, after checking it was built from these symbols, with these
    index-time knobs and this model: an index that answers for another arm would be a lie."""
    meta = read_meta(index_dir)
    if meta["symbols_hash"] != symbols_hash(symbols):
        raise CrmatrixError(f"{index_dir}: built from other symbols than the ones given; rebuild it")
    check_knobs(index_dir, meta, knobs)
    model = check_model(index_dir, meta, model_dir)
    return load_vectors(index_dir, len(symbols), model["dim"]), meta


def load_bm25(index_dir: Path, symbols: list[Symbol]) -> BM25Index:
    """The BM25 stored with the index (`load` checked which symbols it was built from)."""
    path = Path(index_dir) / BM25_DIR
    if not path.is_dir():
        raise CrmatrixError(f"{index_dir}: holds no BM25 (built by an older crmatrix); delete the index and run again")
    return BM25Index.load(path, len(symbols))
