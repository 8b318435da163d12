"""Query vectors: embedded through the shared cache, or read from the directory the
`embed_queries` stage writes once per (dataset, model).

A query's vector depends on its text and the model only, never on an arm, so the workflow
embeds a dataset's queries in a job of their own and every arm's evaluation reads them:
no evaluation loads a model. The directory holds `vectors.npy`, one float32 row per
distinct query in text order, and `meta.json`, the model's sha256 and dim and each row's
`{text_sha, query}`; a reader finds a query's row by the sha256 of the text it asks for,
so it can only ever get the vector of exactly that text, from the model it names.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from crmatrix import CrmatrixError, atomic
from crmatrix.embed.backends import load_embedder
from crmatrix.embed.cache import SUBDIR, EmbeddingCache, embed_with_cache, text_sha
from crmatrix.embed.models import read_model

VECTORS = "vectors.npy"
META = "meta.json"
QueryEncoder = Callable[[list[str]], np.ndarray]


def query_encoder(model_dir: Path, cache_dir: Path, threads: int | None = None) -> QueryEncoder:
    """Embeds queries through the shared cache, building the model only for texts it lacks."""
    model = read_model(model_dir)
    cache = EmbeddingCache(Path(cache_dir) / SUBDIR)

    def encode(queries: list[str]) -> np.ndarray:
        return embed_with_cache(queries, lambda: load_embedder(model, Path(model_dir), threads),
                                model["sha256"], cache)[0]

    return encode


def write(queries: list[str], model_dir: Path, cache_dir: Path, out: Path, threads: int | None = None) -> dict:
    """Embed the distinct queries, sorted (the order the engine embeds a list in, so the
    vectors are the ones it would get), into the directory `out`; returns its meta."""
    model = read_model(model_dir)
    texts = sorted(set(queries))
    vectors = query_encoder(model_dir, cache_dir, threads)(texts)
    meta = {"model": {"sha256": model["sha256"], "dim": model["dim"]},
            "queries": [{"text_sha": text_sha(t), "query": t} for t in texts]}
    with atomic.staged_dir(Path(out)) as d:
        np.save(d / VECTORS, vectors.astype(np.float32, copy=False).reshape(len(texts), model["dim"]))
        atomic.write_json(d / META, meta)
    return meta


def reader(directory: Path, model_sha: str) -> QueryEncoder:
    """An encoder answering from the directory `write` made with the model `model_sha`; a
    query it holds no vector for is an error (the vectors were made from other tasks)."""
    directory = Path(directory)
    if not (directory / META).is_file():
        raise CrmatrixError(f"{directory}: no query vectors there (no {META}; the embed_queries stage writes them)")
    meta = atomic.read_json(directory / META)
    if meta["model"]["sha256"] != model_sha:
        raise CrmatrixError(f"{directory}: embedded with model {meta['model']['sha256'][:12]}, but the arm's model is "
                            f"{model_sha[:12]}; delete it and run again")
    try:
        vectors = np.load(directory / VECTORS)
    except (OSError, ValueError) as e:
        raise CrmatrixError(f"{directory / VECTORS}: unreadable ({e}); delete it and run again") from None
    if vectors.shape != (len(meta["queries"]), meta["model"]["dim"]):
        raise CrmatrixError(f"{directory / VECTORS}: shape {vectors.shape}, expected "
                            f"({len(meta['queries'])}, {meta['model']['dim']}); delete it and run again")
    rows = {q["text_sha"]: i for i, q in enumerate(meta["queries"])}

    def encode(queries: list[str]) -> np.ndarray:
        shas = [text_sha(q) for q in queries]
        missing = [q for q, sha in zip(queries, shas, strict=True) if sha not in rows]
        if missing:
            raise CrmatrixError(f"{directory}: holds no vector for the query {missing[0]!r} (embedded from other "
                                "tasks); delete it and run again")
        return vectors[[rows[sha] for sha in shas]]

    return encode
