"""`crmatrix cache info|evict` on a repository corpus's commits' trees (crmatrix.versions.trees)
and an external tool's indexes of them (crmatrix.versions.commits), with exact figures: a file
hard-linked from many trees is counted once."""

import os
import stat
from pathlib import Path

import pytest
from test_swebench_workflow import FILES_1, URL, bundle

from crmatrix import atomic, integrity
from crmatrix.pipeline import caches
from crmatrix.stages import fetch_repository
from crmatrix.versions import commits, trees
from crmatrix.versions.repository import commit_files

NOW = 1_000_000_000.0
DAY = 86400.0
# the second commit edits config.py and adds merge.py: net.py and store.py are both trees'
SECOND = {**FILES_1, "pkg/config.py": FILES_1["pkg/config.py"].replace("dict(", "DEFAULTS | dict("),
          "pkg/merge.py": "def merge(a, b):\n    return a | b\n"}
INDEX_FILE = 1000  # the bytes the fake tool's index of a tree holds


def at(path, mtime):
    os.utime(path, (mtime, mtime))
    return path


def git_bytes(tree: Path) -> int:
    """The bytes of a tree's own git checkout (none of them hard links)."""
    return sum(f.stat().st_size for f in (tree / ".git").rglob("*") if f.is_file())


@pytest.fixture
def made(tmp_path):
    """The repository widget of two commits under tmp/results, each commit's tree materialized."""
    mirror, shas = bundle(tmp_path, (FILES_1, SECOND))
    results = tmp_path / "results"
    repo = results / "repos" / "widget"
    fetch_repository.run("widget", {"git": URL, "include": ["**/*.py"], "commits": shas}, repo, [str(mirror)])
    files = commit_files(repo)
    made = {c: trees.materialize(repo, files[c]) for c in shas}
    return results, repo, [made[c] for c in shas], files, shas


def build(tree: Path, index: Path, key: str) -> dict:
    """A tool's index of one tree: INDEX_FILE bytes, its info and checksums, as build_index writes them."""
    index.mkdir(parents=True)
    (index / "db.bin").write_bytes(b"\0" * INDEX_FILE)
    info = {"argv": ["tool", "index"], "env": {}, "seconds": 0.5}
    atomic.write_json(index / commits.INDEX_INFO, info)
    integrity.record(index)
    return info


def index_all(results: Path, repo: Path) -> dict:
    return commits.build_indexes(build, repo, results / "index" / "widget" / "fake" / "k1",
                                 results / "tree-index" / "widget" / "fake" / "k1")


def test_info_counts_each_tree_and_each_index_of_one_with_hard_linked_files_once(made):
    results, repo, (first, second), _, _ = made
    listing = index_all(results, repo)
    assert listing["built"] == 2
    # config.py twice (two versions), net.py, store.py, merge.py: five blobs, each stored once
    blobs = [FILES_1["pkg/config.py"], SECOND["pkg/config.py"], FILES_1["pkg/net.py"], FILES_1["pkg/store.py"],
             SECOND["pkg/merge.py"]]
    linked = {first.name: sum(len(t) for t in FILES_1.values()), second.name: sum(len(t) for t in SECOND.values())}
    tree_bytes = {t.name: linked[t.name] + git_bytes(t) for t in (first, second)}
    total = sum(len(b) for b in blobs) + git_bytes(first) + git_bytes(second)
    # what a sum over the files would say: each blob again per tree linking it
    naive = sum(f.stat().st_size for f in trees.trees_root(repo).rglob("*") if f.is_file())
    assert naive == total + sum(linked.values())
    at(first, NOW - 10 * DAY)
    at(second, NOW - 10 * DAY)
    tree_index = results / "tree-index" / "widget" / "fake" / "k1"
    for key in (first.name, second.name):
        at(tree_index / key / commits.INDEX_INFO, NOW - 5 * DAY)
    at(results / "index" / "widget" / "fake" / "k1" / commits.INDEX_INFO, NOW - 2 * DAY)
    report = caches.info(results, results / "cache")
    assert report["trees"]["corpora"] == [{"corpus": "widget", "path": str(results / "trees" / "widget"),
                                           "bytes": total, "trees": 2, "blobs": 5}]
    assert {e["key"]: (e["bytes"], e["made"], e["last_used"]) for e in report["trees"]["entries"]} == {
        first.name: (tree_bytes[first.name], NOW - 10 * DAY, NOW - 2 * DAY),  # its index's listing's time
        second.name: (tree_bytes[second.name], NOW - 10 * DAY, NOW - 2 * DAY)}
    index_bytes = {k: sum(f.stat().st_size for f in (tree_index / k).iterdir()) for k in (first.name, second.name)}
    assert all(b > INDEX_FILE for b in index_bytes.values())
    listing_path = str(results / "index" / "widget" / "fake" / "k1")
    assert report["tree_indexes"]["entries"] == [
        {"path": str(tree_index / k), "corpus": "widget", "system": "fake", "key": "k1", "tree": k,
         "bytes": index_bytes[k], "built": NOW - 5 * DAY, "last_used": NOW - 2 * DAY, "whole": True,
         "listings": [listing_path]} for k in sorted(index_bytes)]
    assert caches.format_info(report, NOW)[-5:] == [
        f"commits' trees {results}/trees: 2 trees, {caches.size(total)} (a file linked from many trees counted once)",
        f"  widget: 2 trees, 5 blobs, {caches.size(total)}",
        f"indexes of trees {results}/tree-index: 2 indexes, {caches.size(sum(index_bytes.values()))}",
        *[f"  widget/fake/k1/{k}  {caches.size(index_bytes[k])}, last used 2d ago" for k in sorted(index_bytes)]]


def test_evict_a_corpus_removes_its_trees_and_indexes_of_them_and_they_are_made_again(made):
    results, repo, (first, second), files, shas = made
    index_all(results, repo)
    listing = results / "index" / "widget" / "fake" / "k1"
    before = caches.info(results, results / "cache")
    report = caches.evict(results, results / "cache", results.parent, corpus="widget", now=NOW)
    # the listing names the removed indexes: it goes too, so that the next run makes it (and them) again
    assert [e["path"] for e in report["indexes"]] == [str(listing)]
    assert sorted(e["path"] for e in report["trees"]) == sorted([str(first), str(second)])
    assert len(report["tree_indexes"]) == 2
    assert report["freed_bytes"] == (before["trees"]["corpora"][0]["bytes"]
                                     + sum(e["bytes"] for e in before["tree_indexes"]["entries"])
                                     + sum(e["bytes"] for e in before["indexes"]["entries"]))
    after = caches.info(results, results / "cache")
    assert after["trees"]["corpora"] == [{"corpus": "widget", "path": str(results / "trees" / "widget"),
                                          "bytes": 0, "trees": 0, "blobs": 0}]
    assert (after["trees"]["entries"], after["tree_indexes"]["entries"], after["indexes"]["entries"]) == ([], [], [])
    assert not first.exists() and not listing.exists()
    assert trees.materialize(repo, files[shas[0]]) == first
    assert {p: (first / p).read_text() for p in FILES_1} == FILES_1
    again = index_all(results, repo)
    assert (again["built"], again["reused"]) == (2, 0)


def test_evict_older_than_removes_the_old_tree_whole_and_the_blobs_only_it_linked(made):
    results, repo, (first, second), files, shas = made
    at(first, NOW - 10 * DAY)
    at(second, NOW - DAY)
    root = trees.trees_root(repo)
    (root / f".{first.name}.x1.tmp" / "pkg").mkdir(parents=True)  # a tree a killed job was making
    own = git_bytes(first)
    report = caches.evict(results, results / "cache", results.parent, older_than=caches.parse_age("7d"), now=NOW)
    assert [e["path"] for e in report["trees"]] == [str(first)]
    assert report["freed_bytes"] == len(FILES_1["pkg/config.py"]) + own  # config.py's first version only it held
    assert sorted(p.name for p in root.iterdir()) == sorted([".blobs", ".lock", second.name])
    assert sorted(p.name for p in (root / trees.BLOBS).iterdir()) == sorted(b for _, b in files[shas[1]])
    # the blobs the remaining tree links stay read-only
    assert all(stat.S_IMODE(p.stat().st_mode) & 0o222 == 0 for p in (root / trees.BLOBS).iterdir())
    assert {p: (second / p).read_text() for p in SECOND} == SECOND
    assert trees.materialize(repo, files[shas[0]]) == first
    assert {p: (first / p).read_text() for p in FILES_1} == FILES_1
    assert caches.info(results, results / "cache")["trees"]["corpora"][0]["trees"] == 2
