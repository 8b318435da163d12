"""The builtin engine's index of one corpus under one set of index-time knobs.

An index is the embedding text of every symbol and its vector. Vectors come from the
content-addressed cache, keyed by (model sha256, text sha256), so an index whose knobs
leave most texts unchanged embeds only the texts that changed.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np

from crmatrix import CrmatrixError, atomic
from crmatrix.embed.backends import load_embedder
from crmatrix.embed.cache import EmbeddingCache, embed_with_cache, text_sha
from crmatrix.engine.embedtext import embedding_text
from crmatrix.engine.knobs import Knobs
from crmatrix.symbols import Symbol

CACHE_FILE = "embeddings.sqlite"
MODEL_META = "model.json"


def read_model(model_dir: Path) -> dict:
    path = Path(model_dir) / MODEL_META
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise CrmatrixError(f"{path}: not a prepared model ({e})") from e


def symbols_hash(symbols: list[Symbol]) -> str:
    return atomic.hash_obj([[s.path, s.start_line, s.name] for s in symbols])


def build(symbols: list[Symbol], knobs: Knobs, model_dir: Path, cache_dir: Path, out: Path,
          threads: int | None = None) -> dict:
    t0 = time.perf_counter()
    model = read_model(model_dir)
    texts = [embedding_text(s, knobs) for s in symbols]
    vectors, stats = embed_with_cache(texts, lambda: load_embedder(model, Path(model_dir), threads),
                                      model["sha256"], EmbeddingCache(Path(cache_dir) / CACHE_FILE))
    stats["seconds"] = round(time.perf_counter() - t0, 3)
    meta = {"model": model, "knobs": knobs.to_dict(), "symbols": len(symbols),
            "symbols_hash": symbols_hash(symbols), "embedding": stats}
    with atomic.staged_dir(Path(out)) as d:
        np.save(d / "vectors.npy", vectors.astype(np.float32))
        atomic.write_jsonl(d / "texts.jsonl", [{"path": s.path, "name": s.name, "start_line": s.start_line,
                                                "text_sha": text_sha(t), "text": t} for s, t in zip(symbols, texts)])
        atomic.write_json(d / "meta.json", {**meta, "model_dir": str(model_dir)})
    return meta


def load(index_dir: Path, symbols: list[Symbol]) -> tuple[np.ndarray, dict]:
    index_dir = Path(index_dir)
    meta = json.loads((index_dir / "meta.json").read_text())
    if meta["symbols_hash"] != symbols_hash(symbols):
        raise CrmatrixError(f"{index_dir}: built from other symbols than the ones given; rebuild it")
    return np.load(index_dir / "vectors.npy"), meta


def query_encoder(meta: dict, cache_dir: Path, threads: int | None = None):
    """Embeds queries through the same cache, so every arm after the first pays nothing."""
    model = meta["model"]
    cache = EmbeddingCache(Path(cache_dir) / CACHE_FILE)

    def encode(queries: list[str]) -> np.ndarray:
        return embed_with_cache(queries, lambda: load_embedder(model, Path(meta["model_dir"]), threads),
                                model["sha256"], cache)[0]

    return encode
