"""The embedding cache of immutable shards: round trips, what a reader refuses to trust,
compaction, and concurrent index builds sharing one cache directory."""

import functools
import hashlib
import multiprocessing
import os
import struct
import time
from pathlib import Path

import numpy as np
import pytest

from crmatrix import CrmatrixError, atomic
from crmatrix.embed import cache as cache_mod
from crmatrix.embed.cache import EmbeddingCache, embed_with_cache, shard_bytes, text_sha
from crmatrix.engine import index
from crmatrix.engine.embedtext import embedding_text
from crmatrix.engine.knobs import resolve
from crmatrix.symbols import Symbol

HEADER = 8 + 32 + 4 + 4


class CountingEmbedder:
    """A deterministic 4-d fake that records what it was asked to embed."""

    dim = 4

    def __init__(self, log: list):
        self.log = log

    def encode(self, texts: list[str], on_batch=None) -> np.ndarray:
        self.log.extend(texts)
        rows = [[len(t), sum(map(ord, t)) % 97, 1.0, i % 3] for i, t in enumerate(texts)]
        return np.array(rows, dtype=np.float32)


class HashEmbedder:
    """An 8-d fake whose vector of a text depends on that text only (as a real embedder's must)."""

    dim = 8

    def encode(self, texts: list[str], on_batch=None) -> np.ndarray:
        time.sleep(0.002)  # slow enough that concurrent jobs interleave their chunks
        return np.stack([hash_vector(t) for t in texts])


def hash_vector(text: str) -> np.ndarray:
    digest = hashlib.sha256(text.encode()).digest()
    return np.frombuffer(digest, dtype="<u4").astype(np.float32) / 2**32


@pytest.fixture
def cache(tmp_path):
    return EmbeddingCache(tmp_path / "deep" / "embeddings")


def counting_factory(log: list, built: list):
    def factory():
        built.append(1)
        return CountingEmbedder(log)
    return factory


def counts(stats: dict) -> dict:
    """The counts of embed_with_cache's stats (its timings vary from run to run)."""
    return {k: stats[k] for k in ("texts", "unique", "cached", "embedded")}


def shard_files(cache, model="m"):
    return sorted(p.name for p in (cache.root / model).iterdir())


def test_round_trip_and_shard_layout(cache):
    a, b = text_sha("a"), text_sha("b")
    vecs = {b: np.ones(4, dtype=np.float64), a: np.arange(4, dtype=np.float32)}
    path = cache.put_many("m1", vecs)
    data = path.read_bytes()
    assert path.parent == cache.root / "m1" and path.name == hashlib.sha256(data).hexdigest() + ".emb"
    assert len(data) == HEADER + 2 * (32 + 4 * 4) == 144
    magic, model, dim, count = struct.unpack("<8s32sII", data[:HEADER])
    assert (magic, model, dim, count) == (b"CRMXEMB1", hashlib.sha256(b"m1").digest(), 4, 2)
    assert data[HEADER:HEADER + 64] == bytes.fromhex(min(a, b)) + bytes.fromhex(max(a, b))  # sorted keys
    got = cache.get_many("m1", [a, b, text_sha("zzz")])
    assert set(got) == {a, b} and got[b].dtype == np.float32
    assert got[a].tobytes() == np.arange(4, dtype="<f4").tobytes() and np.array_equal(got[b], np.ones(4))
    assert cache.get_many("other-model", [a]) == {}
    assert cache.models() == ["m1"]
    assert text_sha("hello") == "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"


def test_a_digest_ending_in_nul_bytes_round_trips(cache):
    # numpy's fixed-width bytes drop trailing NULs; the key must come back whole
    key = "ab" * 30 + "0000"
    cache.put_many("m", {key: np.ones(4)})
    assert list(cache.get_many("m", [key])) == [key]


def test_one_shard_holds_one_width_and_model_ids_are_file_names(cache):
    with pytest.raises(CrmatrixError, match=r"share one non-zero width, got \[4, 384\]"):
        cache.put_many("m", {text_sha("a"): np.zeros(4), text_sha("b"): np.zeros(384)})
    with pytest.raises(CrmatrixError, match=r"model id '../x' is not a file name"):
        cache.get_many("../x", [text_sha("a")])
    assert not cache.root.exists()


def test_embed_with_cache_embeds_only_what_is_missing(cache):
    log, built = [], []
    texts = ["a", "bb", "a", "ccc"]
    first, stats = embed_with_cache(texts, counting_factory(log, built), "m", cache)
    assert counts(stats) == {"texts": 4, "unique": 3, "cached": 0, "embedded": 3}
    assert first.shape == (4, 4) and np.array_equal(first[0], first[2])
    assert sorted(log) == ["a", "bb", "ccc"]

    log.clear(), built.clear()
    again, stats = embed_with_cache(texts, counting_factory(log, built), "m", cache)
    assert stats["embedded"] == 0 and stats["cached"] == 3 and built == [] and log == []
    assert again.tobytes() == first.tobytes()

    changed, stats = embed_with_cache(["a", "bb!", "ccc"], counting_factory(log, built), "m", cache)
    assert log == ["bb!"] and counts(stats) == {"texts": 3, "unique": 3, "cached": 2, "embedded": 1}
    assert np.array_equal(changed[[0, 2]], first[[0, 3]])
    assert len(shard_files(cache)) == 2


@pytest.mark.parametrize("damage", ["truncate", "flip", "foreign", "renamed", "junk"])
def test_a_shard_that_cannot_be_trusted_is_skipped_and_re_embedded(cache, damage, capsys):
    log = []
    embed_with_cache(["a"], counting_factory(log, []), "m", cache)
    bb_shard = cache.put_many("m", {text_sha("bb"): np.array([9, 9, 9, 9], dtype=np.float32)})
    data = bb_shard.read_bytes()
    if damage == "truncate":  # a torn copy: the name promises bytes that are not there
        bb_shard.write_bytes(data[:-6])
    elif damage == "flip":
        bb_shard.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    elif damage == "foreign":  # another model's shard dropped into this model's directory
        other = shard_bytes("m2", {text_sha("bb"): np.zeros(4)})
        bb_shard.unlink()
        bb_shard = cache.root / "m" / f"{hashlib.sha256(other).hexdigest()}.emb"
        bb_shard.write_bytes(other)
    elif damage == "renamed":
        bb_shard.rename(bb_shard.with_name("0" * 64 + ".emb"))
        bb_shard = bb_shard.with_name("0" * 64 + ".emb")
    else:
        bb_shard.write_bytes(b"not a shard at all, but longer than a header: " + b"x" * 40)
    expected = {"truncate": f"is {len(data) - 6} bytes, but its header says 1 vectors of 4 floats",
                "flip": "its bytes do not hash to its name (torn or altered)",
                "foreign": "holds another model's vectors",
                "renamed": "its bytes do not hash to its name (torn or altered)",
                "junk": "not an embedding shard"}[damage]
    log.clear()
    vecs, stats = embed_with_cache(["a", "bb"], counting_factory(log, []), "m", cache)
    assert log == ["bb"] and stats["embedded"] == 1 and stats["cached"] == 1
    assert vecs[1].tolist() == CountingEmbedder([]).encode(["bb"])[0].tolist() == [2.0, 2.0, 1.0, 0.0]
    assert f"skipped {bb_shard}: {expected}; its texts are embedded again" in capsys.readouterr().err
    bad = [s for s in cache.shards("m") if s.count is None]
    assert [(s.path, s.problem) for s in bad] == [(bb_shard, expected)]


def test_a_shard_too_short_for_its_header_is_skipped(cache):
    cache.put_many("m", {text_sha("a"): np.ones(4)})
    short = cache.root / "m" / f"{hashlib.sha256(b'CRMX').hexdigest()}.emb"
    short.write_bytes(b"CRMX")
    assert list(cache.get_many("m", [text_sha("a")])) == [text_sha("a")]
    assert [s.problem for s in cache.shards("m")].count("ends after 4 bytes") == 1


def test_a_half_written_shard_is_never_listed(cache, monkeypatch):
    cache.put_many("m", {text_sha("a"): np.ones(4)})
    before = shard_files(cache)
    # A writer killed after writing some bytes but before its rename leaves only a temporary.
    (cache.root / "m" / f".{'1' * 64}.emb.abc123.tmp").write_bytes(b"CRMXEMB1" + b"\0" * 100)

    def killed(fd):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", killed)
    with pytest.raises(KeyboardInterrupt):
        cache.put_many("m", {text_sha("b"): np.ones(4)})
    monkeypatch.undo()
    assert shard_files(cache) == sorted([*before, f".{'1' * 64}.emb.abc123.tmp"])
    assert set(cache.get_many("m", [text_sha("a"), text_sha("b")])) == {text_sha("a")}


def test_put_many_is_all_or_nothing(cache):
    items = {text_sha("a"): np.zeros(4), text_sha("bad"): np.array(["not", "a", "vector"]),
             text_sha("c"): np.zeros(4)}
    with pytest.raises(ValueError):
        cache.put_many("m", items)
    assert cache.get_many("m", list(items)) == {} and not (cache.root / "m").exists()


def test_each_chunk_is_a_shard_of_its_own(cache):
    class DiesOnSecondChunk(CountingEmbedder):
        def encode(self, texts, on_batch=None):
            if self.log:
                raise KeyboardInterrupt
            return super().encode(texts)

    texts = [f"t{i}" for i in range(5)]
    with pytest.raises(KeyboardInterrupt):
        embed_with_cache(texts, lambda: DiesOnSecondChunk([]), "m", cache, batch=2)
    assert sorted(cache.get_many("m", [text_sha(t) for t in texts])) == sorted(text_sha(t) for t in texts[:2])
    assert len(shard_files(cache)) == 1


def test_embed_with_cache_of_nothing_builds_no_embedder(cache):
    built = []
    vecs, stats = embed_with_cache([], counting_factory([], built), "m", cache)
    assert vecs.shape[0] == 0 and built == [] and counts(stats) == {"texts": 0, "unique": 0, "cached": 0, "embedded": 0}
    assert stats["load_seconds"] == stats["embed_seconds"] == 0.0  # nothing loaded, nothing embedded


def test_the_first_shard_in_name_order_wins(cache):
    key = text_sha("a")
    paths = [cache.put_many("m", {key: np.full(4, float(v))}) for v in (1, 2, 3)]
    winner = [1.0, 2.0, 3.0][paths.index(min(paths))]
    assert cache.get_many("m", [key])[key].tolist() == [winner] * 4
    cache.rewrite("m")  # compaction keeps the vector every reader saw
    assert cache.get_many("m", [key])[key].tolist() == [winner] * 4


def test_rewrite_merges_drops_and_frees_exactly(cache):
    keys = [text_sha(t) for t in "abcd"]
    s1 = cache.put_many("m", {keys[0]: np.ones(4), keys[1]: np.ones(4)})
    s2 = cache.put_many("m", {keys[1]: np.ones(4), keys[2]: np.zeros(4)})
    s3 = cache.put_many("m", {keys[3]: np.full(4, 3.0)})
    os.utime(s1, (1000, 1000)), os.utime(s2, (5000, 5000)), os.utime(s3, (3000, 3000))
    bad = cache.root / "m" / ("f" * 64 + ".emb")
    bad.write_bytes(b"x" * 10)
    stale = cache.root / "m" / ".stale.emb.x.tmp"
    stale.write_bytes(b"y" * 7)
    os.utime(stale, (0, 0))
    fresh = cache.root / "m" / ".fresh.emb.x.tmp"
    fresh.write_bytes(b"z" * 5)
    now = 10_000.0
    os.utime(fresh, (now - 60, now - 60))
    sizes = sum(p.stat().st_size for p in (s1, s2, s3, bad))
    report = cache.rewrite("m", keep=lambda k, mtime: k != keys[3], now=now)
    merged = HEADER + 3 * (32 + 16)
    assert report == {"model": "m", "shards_before": 4, "entries_before": 4, "entries_kept": 3,
                      "freed_bytes": sizes + 7 - merged}
    (only,) = [p for p in (cache.root / "m").iterdir() if p.suffix == ".emb"]
    assert only.stat().st_size == merged and only.stat().st_mtime == 5000  # the newest entry it kept
    assert fresh.exists() and not stale.exists()  # a live writer's temporary is left alone
    got = cache.get_many("m", keys)
    assert sorted(got) == sorted(keys[:3]) and got[keys[2]].tolist() == [0.0] * 4
    assert cache.rewrite("m", keep=lambda k, mtime: False, now=now)["freed_bytes"] == merged
    assert [p.name for p in (cache.root / "m").iterdir()] == [fresh.name]


def test_a_reader_finds_entries_compacted_away_under_it(cache, monkeypatch):
    keys = [text_sha(t) for t in "abc"]
    for i, k in enumerate(keys):
        cache.put_many("m", {k: np.full(4, float(i))})
    listed = sorted((cache.root / "m").iterdir())
    real = cache_mod._read_shard
    compacted = []

    def compacted_after_listing(path, model_sha, wanted):
        if not compacted:  # the reader has listed the three shards; now they are merged into one
            compacted.append(None)  # before rewrite, which reads shards through here too
            compacted[0] = EmbeddingCache(cache.root).rewrite("m")
        return real(path, model_sha, wanted)

    monkeypatch.setattr(cache_mod, "_read_shard", compacted_after_listing)
    got = cache.get_many("m", keys)
    assert {k: v[0] for k, v in got.items()} == {k: float(i) for i, k in enumerate(keys)}
    assert compacted[0]["shards_before"] == 3 and not any(p.exists() for p in listed)
    assert len(list((cache.root / "m").iterdir())) == 1


# --- concurrent index builds against one cache directory ------------------------------------

MODEL = {"sha256": "f" * 64, "dim": HashEmbedder.dim, "backend": "fake", "source": "test"}


def corpus_symbols(corpus: int) -> list[Symbol]:
    """Corpora that share half their symbols with the next one, so concurrent jobs embed
    some texts at the same time."""
    return [Symbol(f"fn{n}", "function", "", f"src/m{n % 7}.py", "python", n + 1, n + 2,
                   f"def fn{n}(x):", f"Does thing {n}.", f"def fn{n}(x):\n    return x + {n}\n")
            for n in range(corpus * 40, corpus * 40 + 80)]


def build_one(job: int, model_dir: str, cache_dir: str, out: str, barrier) -> None:
    # The builder as build_index runs it, with the fake embedder in place of the model.
    index.load_embedder = lambda model, model_dir, threads: HashEmbedder()
    index.embed_with_cache = functools.partial(cache_mod.embed_with_cache, batch=7)  # many shards
    barrier.wait()
    if job == 4:  # a compaction running among the builds
        for _ in range(20):
            EmbeddingCache(Path(cache_dir) / cache_mod.SUBDIR).rewrite(MODEL["sha256"])
        return
    index.build(corpus_symbols(job % 3), resolve({}, "python"), Path(model_dir), Path(cache_dir), Path(out))


def test_concurrent_index_builds_share_one_cache(tmp_path, capfd):
    model_dir = tmp_path / "model"
    atomic.write_json(model_dir / "model.json", MODEL)
    cache_dir = tmp_path / "cache"
    ctx = multiprocessing.get_context("fork")
    barrier = ctx.Barrier(5)
    jobs = [ctx.Process(target=build_one, args=(j, str(model_dir), str(cache_dir), str(tmp_path / f"idx{j}"),
                                                barrier)) for j in range(5)]
    for p in jobs:
        p.start()
    for p in jobs:
        p.join(120)
    assert [p.exitcode for p in jobs] == [0] * 5
    assert "skipped" not in capfd.readouterr().err  # no job ever met a half-written shard
    knobs = resolve({}, "python")
    for j in range(4):
        texts = [embedding_text(s, knobs) for s in corpus_symbols(j % 3)]
        alone = np.stack([hash_vector(t) for t in texts])
        built = np.load(tmp_path / f"idx{j}" / "vectors.npy")
        assert built.tobytes() == alone.tobytes(), f"index {j}"
    store = EmbeddingCache(cache_dir / cache_mod.SUBDIR)
    assert all(s.count is not None for s in store.shards(MODEL["sha256"]))
    texts = {embedding_text(s, knobs) for c in range(3) for s in corpus_symbols(c)}
    got = store.get_many(MODEL["sha256"], [text_sha(t) for t in texts])
    assert len(got) == len(texts) == 160
    assert all(got[text_sha(t)].tobytes() == hash_vector(t).tobytes() for t in texts)
    # A later build finds every text in the cache.
    meta = index.build(corpus_symbols(1), knobs, model_dir, cache_dir, tmp_path / "again")
    assert meta["embedding"]["cached"] == 80 and meta["embedding"]["embedded"] == 0
