"""`crmatrix cache info|compact|evict` on a small results tree with exact figures."""

import json
import os
import shutil

import numpy as np
import pytest

from crmatrix import CrmatrixError, atomic, cli
from crmatrix.embed.cache import EmbeddingCache, text_sha
from crmatrix.engine.knobs import resolve
from crmatrix.pipeline import caches
from crmatrix.versions import bases

NOW = 1_000_000_000.0
DAY = 86400.0
MODEL = "ab" * 32
BASE = {}
NL = {"CODELENS_EMBED_HINT_INCLUDE_COMMENTS": "1"}
SPARSE = {"CODELENS_RANK_SPARSE_TERM_WEIGHT": "1"}


def at(path, mtime):
    os.utime(path, (mtime, mtime))
    return path


def builtin_index(results, corpus, key, env, texts, built):
    d = results / "index" / corpus / "builtin" / key
    knobs = resolve(env, "python").to_dict()
    atomic.write_json(d / "meta.json", {"model": {"sha256": MODEL}, "knobs": knobs, "symbols": len(texts)})
    atomic.write_jsonl(d / "texts.jsonl", [{"text_sha": text_sha(t), "text": t} for t in texts])
    np.save(d / "vectors.npy", np.zeros((len(texts), 4), dtype=np.float32))
    at(d / "meta.json", built)


def run(results, dataset, corpus, system, arm, env, queries, mtime, conf=None):
    prov = {"corpus": {"name": corpus}, "system": {"name": system, **(conf or {"type": "builtin"})},
            "arm": {"name": arm, "env": env}}
    if conf is None:
        prov["model"] = {"sha256": MODEL}
        prov["system_run"] = {"knobs": resolve(env, "python").to_dict()}
    path = results / "runs" / dataset / system / f"{arm}.json"
    atomic.write_json(path, {"methods": {"hybrid": {"queries": [{"query": q} for q in queries]}},
                             "provenance": prov})
    at(path, mtime)


PEER = {"type": "mcp", "options": {"index": ["peer", "index", "{corpus}"], "index_env": ["PEER_CHUNK"]}}


@pytest.fixture
def tree(tmp_path):
    """alpha: a baseline index (two runs, one of them 2e-only, share it), an NL index no run
    uses, and an external peer's index; beta: one index and one run. Eight embedding entries
    in five shards."""
    results = tmp_path / "results"
    builtin_index(results, "alpha", "aaaaaaaaaaaa", BASE, ["a1", "a2"], NOW - 10 * DAY)
    builtin_index(results, "alpha", "bbbbbbbbbbbb", NL, ["a1", "n1"], NOW - 10 * DAY)
    builtin_index(results, "beta", "cccccccccccc", BASE, ["b1"], NOW - 2 * DAY)
    peer = results / "index" / "alpha" / "peer" / "dddddddddddd"
    atomic.write_json(peer / "crmatrix-index.json", {"argv": PEER["options"]["index"], "env": {"PEER_CHUNK": "8"}})
    (peer / "db.bin").write_bytes(b"\0" * 1000)
    at(peer / "crmatrix-index.json", NOW - 30 * DAY)
    (results / "index" / "alpha" / "builtin" / ".eeeeeeeeeeee.x1.tmp").mkdir()  # a build in progress
    run(results, "alpha-ds", "alpha", "builtin", "baseline", BASE, ["find x"], NOW - DAY)
    run(results, "alpha-ds", "alpha", "builtin", "2e-only", SPARSE, ["find x"], NOW - DAY)
    run(results, "alpha-ds", "alpha", "peer", "baseline", {"PEER_CHUNK": "8", "OTHER": "1"}, ["find x"],
        NOW - 30 * DAY, PEER)
    run(results, "beta-ds", "beta", "builtin", "baseline", BASE, ["find y"], NOW - 2 * DAY)
    atomic.write_json(results / "models" / "minilm" / "model.json", {"sha256": MODEL})
    store = EmbeddingCache(results / "cache" / "embeddings")
    vec = np.ones(4)
    for texts, mtime in ((["a1", "a2", "n1"], NOW - 10 * DAY), (["b1"], NOW - 2 * DAY),
                         (["find x", "find y"], NOW - DAY), (["old"], NOW - 20 * DAY), (["new"], NOW - 3600)):
        at(store.put_many(MODEL, {text_sha(t): vec for t in texts}), mtime)
    return results


# 48-byte header + 48 per entry (32-byte key, 4 floats)
SHARDS = 192 + 96 + 144 + 96 + 96
# texts.jsonl 92 per text, vectors.npy 128 + 16 per text, meta.json the knobs; the peer's 1000 + 98
INDEX_BYTES = {"aaaaaaaaaaaa": 184 + 160 + 675, "bbbbbbbbbbbb": 184 + 160 + 674, "cccccccccccc": 92 + 144 + 675,
               "dddddddddddd": 1098}


def test_info_counts_entries_bytes_shards_and_the_runs_of_each_index(tree):
    report = caches.info(tree, tree / "cache")
    assert report["embeddings"]["models"] == [{
        "model": MODEL, "names": ["minilm"], "entries": 8, "shards": 5, "bytes": SHARDS,
        "used_by_indexes": 4, "used_by_queries": 2, "unused": 2, "indexes": 3, "invalid_shards": [],
        "temporaries": 0}]
    got = {e["key"]: (e["corpus"], e["system"], e["bytes"], e["last_used"], e["runs"])
           for e in report["indexes"]["entries"]}
    assert got == {
        "aaaaaaaaaaaa": ("alpha", "builtin", INDEX_BYTES["aaaaaaaaaaaa"], NOW - DAY,
                         ["alpha-ds/builtin/2e-only", "alpha-ds/builtin/baseline"]),
        "bbbbbbbbbbbb": ("alpha", "builtin", INDEX_BYTES["bbbbbbbbbbbb"], NOW - 10 * DAY, []),
        "dddddddddddd": ("alpha", "peer", INDEX_BYTES["dddddddddddd"], NOW - 30 * DAY, ["alpha-ds/peer/baseline"]),
        "cccccccccccc": ("beta", "builtin", INDEX_BYTES["cccccccccccc"], NOW - 2 * DAY, ["beta-ds/builtin/baseline"]),
    }
    assert caches.format_info(report, NOW) == [
        f"embedding cache {tree}/cache/embeddings: 1 model, 8 entries, 624 B in 5 shards",
        f"  model {MODEL[:12]} (minilm): 8 entries in 5 shards, 624 B; 4 used by 3 indexes, 2 by runs' queries, "
        "2 unused",
        f"index cache {tree}/index: 4 indexes, 4.0 KiB",
        "  alpha/builtin/aaaaaaaaaaaa  1019 B, last used 1d ago, used by 2 runs: alpha-ds/builtin/2e-only, "
        "alpha-ds/builtin/baseline",
        "  alpha/builtin/bbbbbbbbbbbb  1018 B, last used 10d ago, used by no run",
        "  alpha/peer/dddddddddddd  1.1 KiB, last used 30d ago, used by 1 run: alpha-ds/peer/baseline",
        "  beta/builtin/cccccccccccc  911 B, last used 2d ago, used by 1 run: beta-ds/builtin/baseline",
        f"builds kept to grow from {tree}/cache/bases: 0 builds, 0 B, 0 B of it linked from no result",
        f"commits' trees {tree}/trees: 0 trees, 0 B (a file linked from many trees counted once)",
        f"indexes of trees {tree}/tree-index: 0 indexes, 0 B",
    ]


def test_info_shows_invalid_shards_and_temporaries(tree, capsys):
    model_dir = tree / "cache" / "embeddings" / MODEL
    (model_dir / ("0" * 64 + ".emb")).write_bytes(b"x" * 60)
    (model_dir / ".1.emb.x.tmp").write_bytes(b"x" * 10)
    (m,) = caches.info(tree, tree / "cache")["embeddings"]["models"]
    assert (m["entries"], m["shards"], m["bytes"], m["temporaries"]) == (8, 5, SHARDS + 70, 1)
    assert m["invalid_shards"] == [{"path": str(model_dir / ("0" * 64 + ".emb")), "bytes": 60,
                                    "problem": "not an embedding shard"}]


def test_evict_one_corpus_frees_its_index_and_the_entries_only_it_used(tree):
    report = caches.evict(tree, tree / "cache", tree.parent, corpus="beta", now=NOW)
    assert [e["path"] for e in report["indexes"]] == [str(tree / "index" / "beta" / "builtin" / "cccccccccccc")]
    (rw,) = report["embeddings"]
    merged = 48 + 7 * 48
    assert (rw["entries_before"], rw["entries_kept"], rw["shards_before"]) == (8, 7, 5)
    assert report["freed_bytes"] == INDEX_BYTES["cccccccccccc"] + SHARDS - merged
    assert not (tree / "index" / "beta" / "builtin" / "cccccccccccc").exists()
    assert sorted(p.name for p in (tree / "index" / "beta" / "builtin").iterdir()) == []
    texts = ("a1", "a2", "n1", "b1", "find x", "find y", "old", "new")
    left = EmbeddingCache(tree / "cache" / "embeddings").get_many(MODEL, [text_sha(t) for t in texts])
    assert len(left) == 7 and text_sha("b1") not in left
    assert caches.format_evict(report, NOW, {MODEL: ["minilm"]}) == [
        f"evicted {tree}/index/beta/builtin/cccccccccccc (911 B, last used 2d ago, used by 1 run)",
        f"embeddings of model {MODEL[:12]} (minilm): dropped 1 of 8 entries, 5 shards merged into 1, freed 240 B",
        "freed 1.1 KiB (1,151 bytes)",
    ]


def test_evict_older_than_goes_by_last_use(tree):
    report = caches.evict(tree, tree / "cache", tree.parent, older_than=caches.parse_age("7d"), now=NOW)
    # the NL index (built 10d ago, no run) and the peer's (its run is 30d old) go; the baseline
    # index stays (its runs are a day old) though it was built 10 days ago
    assert sorted(os.path.basename(e["path"]) for e in report["indexes"]) == ["bbbbbbbbbbbb", "dddddddddddd"]
    left = EmbeddingCache(tree / "cache" / "embeddings").get_many(
        MODEL, [text_sha(t) for t in ("a1", "a2", "n1", "b1", "find x", "find y", "old", "new")])
    # n1 was only the NL index's; "old" is unused and 20 days old; a1 stays with the baseline index
    assert sorted(left) == sorted(text_sha(t) for t in ("a1", "a2", "b1", "find x", "find y", "new"))
    assert report["freed_bytes"] == INDEX_BYTES["bbbbbbbbbbbb"] + INDEX_BYTES["dddddddddddd"] + SHARDS - (48 + 6 * 48)
    assert (tree / "index" / "alpha" / "builtin" / "aaaaaaaaaaaa" / "meta.json").is_file()


def test_evict_all_empties_both_caches(tree):
    report = caches.evict(tree, tree / "cache", tree.parent, everything=True, now=NOW)
    assert report["freed_bytes"] == sum(INDEX_BYTES.values()) + SHARDS
    assert not (tree / "cache" / "embeddings" / MODEL).exists()
    assert caches.info(tree, tree / "cache")["indexes"]["entries"] == []


def test_evict_refuses_while_snakemake_holds_its_lock(tree):
    locks = tree.parent / ".snakemake" / "locks"
    locks.mkdir(parents=True)
    (locks / "0.input.lock").write_text("")
    before = caches.info(tree, tree / "cache")
    with pytest.raises(CrmatrixError) as err:
        caches.evict(tree, tree / "cache", tree.parent, everything=True, now=NOW)
    assert str(err.value) == (f"{locks}: a Snakemake run holds its lock (0.input.lock); let it finish, or if it "
                              "was killed, run `snakemake --unlock` first")
    assert caches.info(tree, tree / "cache") == before


def test_evict_needs_a_filter_and_ages_have_units(tree):
    with pytest.raises(CrmatrixError, match=r"^cache evict: say what to free: --older-than D \(e.g. 7d\), "):
        caches.evict(tree, tree / "cache", tree.parent, now=NOW)
    assert [caches.parse_age(a) for a in ("7d", "12h", "30m", "45s")] == [604800.0, 43200.0, 1800.0, 45.0]
    with pytest.raises(CrmatrixError, match=r"^--older-than '7 days': expected a whole number and a unit d, h, m or s"):
        caches.parse_age("7 days")


def test_the_cli_group(tree, monkeypatch, capsys):
    monkeypatch.chdir(tree.parent)
    assert cli.main(["cache", "info", "--cache-dir", "results/cache", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["embeddings"]["models"][0]["entries"] == 8
    assert cli.main(["cache", "compact", "--cache-dir", "results/cache"]) == 0
    assert capsys.readouterr().out == (f"model {MODEL[:12]}: 5 shards merged into 1 (8 entries), "
                                       f"freed {SHARDS - (48 + 8 * 48)} B\n")
    assert cli.main(["cache", "evict", "--cache-dir", "results/cache", "--older-than", "1 week"]) == 2
    assert "crmatrix: --older-than '1 week': expected" in capsys.readouterr().err
    assert cli.main(["cache", "evict", "--cache-dir", "results/cache", "--corpus", "nope"]) == 0
    assert capsys.readouterr().out == "freed 0 B (0 bytes)\n"


@pytest.fixture
def kept(tree, tmp_path):
    """Two kept builds: `linked`, whose 100 bytes its result still links, used a day ago, and
    `alone`, 30 bytes whose result was rebuilt since, used 20 days ago."""
    cache = tree / "cache"
    results_store = tree / "symbols" / "repo"
    results_store.mkdir(parents=True)
    (results_store / "contents.jsonl").write_bytes(b"x" * 100)
    linked = bases.keep(results_store, cache, "stores", "k", "linked")  # the result still holds its bytes
    (tmp_path / "gone").mkdir()
    (tmp_path / "gone" / "contents.jsonl").write_bytes(b"y" * 30)
    alone = bases.keep(tmp_path / "gone", cache, "stores", "k", "alone")
    shutil.rmtree(tmp_path / "gone")  # its result was rebuilt since: the kept build is the only link
    return at(linked, NOW - DAY), at(alone, NOW - 20 * DAY)


def test_info_lists_the_builds_kept_to_grow_from_with_the_bytes_no_result_links(tree, kept):
    linked, alone = kept
    report = caches.info(tree, tree / "cache")
    assert report["bases"] == {"dir": str(tree / "cache" / "bases"), "entries": [
        {"path": str(alone), "kind": "stores", "key": "k", "name": "alone", "bytes": 30, "unshared_bytes": 30,
         "last_used": NOW - 20 * DAY},
        {"path": str(linked), "kind": "stores", "key": "k", "name": "linked", "bytes": 100, "unshared_bytes": 0,
         "last_used": NOW - DAY}]}
    assert caches.format_info(report, NOW)[-5:-2] == [
        f"builds kept to grow from {tree}/cache/bases: 2 builds, 130 B, 30 B of it linked from no result",
        "  stores/k/alone  30 B (30 B linked from no result), last used 20d ago",
        "  stores/k/linked  100 B (0 B linked from no result), last used 1d ago",
    ]


def test_evict_removes_the_builds_kept_to_grow_from_by_age_or_all_freeing_what_no_result_links(tree, kept):
    cache = tree / "cache"
    linked, _ = kept
    report = caches.evict(tree, cache, tree.parent, older_than=caches.parse_age("7d"), now=NOW)
    assert report["bases"] == {"removed": 1, "freed_bytes": 30} and bases.kept(cache) == [linked]
    assert "builds kept to grow from: removed 1, freed 30 B" in caches.format_evict(report, NOW, {})
    report = caches.evict(tree, cache, tree.parent, everything=True, now=NOW)
    assert report["bases"] == {"removed": 1, "freed_bytes": 0} and bases.kept(cache) == []


def test_evict_leaves_a_kept_build_that_a_build_of_another_project_is_reading(tree, kept):
    cache = tree / "cache"
    linked, alone = kept
    with bases.pick(cache, "stores", "k", 1, lambda d: 1) as reading:  # both share a row: the first by name
        assert reading == alone
        report = caches.evict(tree, cache, tree.parent, everything=True, now=NOW)
    assert report["bases"] == {"removed": 1, "freed_bytes": 0} and bases.kept(cache) == [alone]
