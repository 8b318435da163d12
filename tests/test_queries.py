"""A dataset's query vectors, embedded once per model (stage embed_queries) and read by every arm."""

import json

import numpy as np
import pytest

from crmatrix import CrmatrixError, atomic
from crmatrix.embed import queries
from crmatrix.embed.cache import SUBDIR, EmbeddingCache, text_sha
from crmatrix.stages import embed_queries

# A backend no embedder exists for: any attempt to load the model fails, so a test passing
# with it shows the vectors came from the cache or the file alone.
MODEL = {"sha256": "a" * 64, "dim": 3, "backend": "none-here", "source": "test"}
QUERIES = ["read frame", "open a connection", "read frame", "évincer l'entrée"]


def vector(text: str) -> np.ndarray:
    rng = np.random.default_rng(int(text_sha(text)[:8], 16))
    v = rng.standard_normal(MODEL["dim"]).astype(np.float32)
    return v / np.linalg.norm(v)


@pytest.fixture
def cached(tmp_path):
    """A model directory and a cache holding every query's vector."""
    model_dir = tmp_path / "model"
    atomic.write_json(model_dir / "model.json", MODEL)
    cache_dir = tmp_path / "cache"
    EmbeddingCache(cache_dir / SUBDIR).put_many(MODEL["sha256"], {text_sha(q): vector(q) for q in QUERIES})
    return model_dir, cache_dir


def test_the_stage_writes_each_distinct_query_once_in_text_order(cached, tmp_path):
    model_dir, cache_dir = cached
    tasks = tmp_path / "tasks.jsonl"
    atomic.write_jsonl(tasks, [{"task_id": f"q{i}", "query": q, "query_type": "nl", "gold": {}, "corpus": "c"}
                               for i, q in enumerate(QUERIES)])
    out = tmp_path / "queries"
    embed_queries.run(tasks=tasks, model_dir=model_dir, cache_dir=cache_dir, out=out)
    texts = sorted(set(QUERIES))
    assert json.loads((out / "meta.json").read_text()) == {
        "model": {"sha256": MODEL["sha256"], "dim": 3},
        "queries": [{"text_sha": text_sha(t), "query": t} for t in texts]}
    assert np.load(out / "vectors.npy").tobytes() == np.stack([vector(t) for t in texts]).tobytes()
    # what a reader gives is what embedding through the cache gives, row for row, in the order asked
    asked = ["évincer l'entrée", "read frame", "open a connection", "read frame"]
    got = queries.reader(out, MODEL["sha256"])(asked)
    assert got.tobytes() == queries.query_encoder(model_dir, cache_dir)(asked).tobytes()
    # and the same tasks give the same bytes again
    again = tmp_path / "again"
    embed_queries.run(tasks=tasks, model_dir=model_dir, cache_dir=cache_dir, out=again)
    assert [(again / f).read_bytes() for f in ("meta.json", "vectors.npy")] == \
        [(out / f).read_bytes() for f in ("meta.json", "vectors.npy")]


def test_a_reader_refuses_another_model_and_a_query_it_holds_no_vector_for(cached, tmp_path):
    model_dir, cache_dir = cached
    out = tmp_path / "queries"
    queries.write(QUERIES, model_dir, cache_dir, out)
    with pytest.raises(CrmatrixError, match=r"queries: embedded with model aaaaaaaaaaaa, but the arm's model is "
                                            r"bbbbbbbbbbbb; delete it and run again"):
        queries.reader(out, "b" * 64)
    encode = queries.reader(out, MODEL["sha256"])
    with pytest.raises(CrmatrixError, match=r"queries: holds no vector for the query 'read frames' \(embedded from "
                                            r"other tasks\); delete it and run again"):
        encode(["read frame", "read frames"])
    with pytest.raises(CrmatrixError, match=r"nowhere: no query vectors there \(no meta.json; the embed_queries "
                                            r"stage writes them\)"):
        queries.reader(tmp_path / "nowhere", MODEL["sha256"])


def test_a_query_the_cache_lacks_needs_the_model(cached, tmp_path):
    model_dir, cache_dir = cached
    with pytest.raises(CrmatrixError, match="model backend 'none-here'"):
        queries.write(["a query nobody embedded"], model_dir, cache_dir, tmp_path / "queries")
    assert not (tmp_path / "queries").exists()
