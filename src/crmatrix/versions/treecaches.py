"""The caches of a repository corpus's commits, for `crmatrix cache info` and `evict`:

- its trees, `results/trees/CORPUS/TREE/` (crmatrix.versions.trees): each file a hard link into
  the corpus's blob store `.blobs/`, so a corpus's bytes count each file once whatever number
  of trees link it, and a tree's own bytes are those of its files (each once) and its `.git`.
  A tree was last used when it was made (its mtime) or when an index of it was last used.
- an external tool's index of each tree, `results/tree-index/CORPUS/SYSTEM/KEY/TREE/` (the
  rule build_system_index_commits's cache, crmatrix.versions.commits), listed by the index
  job's output `results/index/CORPUS/SYSTEM/KEY/`; it is whole once its checksums are
  written. It was last used when it was built or when a listing naming it was last written.

A tree is removed under its corpus's lock (the one trees.materialize makes trees under),
renamed out of the way first, so a job finds a tree whole or absent and makes an absent one
again; then the blobs no tree links any more go. A tree's files are left read-only: unlinking
needs no write bit, and a file's mode is shared by every hard link to it, so making one
writable would make the blob store's copy writable too. An index of a tree is renamed out of
the way and removed, and so is every listing naming it (`listings`), since a listing's job
does not look for its trees' indexes again: the next run makes the listing anew, building
the indexes it lacks and reusing the others.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from crmatrix import atomic, integrity
from crmatrix.systems.isolation import locked
from crmatrix.versions import commits, trees

TREE_INDEX = "tree-index"  # results/tree-index: the cache rule build_system_index_commits gives its job


def _inodes(path: Path, seen: dict[tuple[int, int], int]) -> None:
    """Each file under `path` into `seen`, (device, inode) -> bytes: a hard-linked file once."""
    for root, _, files in os.walk(path):
        for f in files:
            try:
                st = os.lstat(os.path.join(root, f))
            except FileNotFoundError:  # removed during the walk
                continue
            seen[(st.st_dev, st.st_ino)] = st.st_size


def distinct_bytes(path: Path) -> int:
    seen: dict[tuple[int, int], int] = {}
    _inodes(path, seen)
    return sum(seen.values())


@dataclass
class TreeIndex:
    path: Path
    corpus: str
    system: str
    key: str
    tree: str
    bytes: int
    built: float
    whole: bool
    listings: list[Path]  # the index jobs' outputs naming it
    last_used: float


def _listed(results: Path) -> dict[tuple[str, str, str], tuple[set[str], float]]:
    """(corpus, system, key) -> the trees its listing names and when it was written."""
    out = {}
    for info in sorted((Path(results) / "index").glob(f"[!.]*/[!.]*/[!.]*/{commits.INDEX_INFO}")):
        doc = atomic.read_json(info)
        if isinstance(doc, dict) and doc.get("format") == commits.FORMAT:
            out[tuple(info.parent.parts[-3:])] = (set(doc.get("trees") or {}), info.stat().st_mtime)
    return out


def read_tree_indexes(results: Path) -> list[TreeIndex]:
    """Every index of a tree (staging and removal directories, hidden, are not)."""
    listed = _listed(results)
    out = []
    for path in sorted((Path(results) / TREE_INDEX).glob("[!.]*/[!.]*/[!.]*/[!.]*")):
        if not path.is_dir():
            continue
        corpus, system, key, tree = path.parts[-4:]
        info = path / commits.INDEX_INFO
        built = (info if info.is_file() else path).stat().st_mtime
        names, written = listed.get((corpus, system, key), (set(), built))
        listings = [Path(results) / "index" / corpus / system / key] if tree in names else []
        out.append(TreeIndex(path, corpus, system, key, tree, distinct_bytes(path), built,
                             (path / integrity.CHECKSUMS).is_file(), listings,
                             max(built, written) if listings else built))
    return out


@dataclass
class Tree:
    path: Path
    corpus: str
    key: str
    bytes: int
    made: float
    last_used: float


def read_trees(results: Path, indexes: list[TreeIndex]) -> list[Tree]:
    """Every whole tree (materialize's staging directories, hidden, are not)."""
    used: dict[tuple[str, str], float] = {}
    for ix in indexes:
        used[(ix.corpus, ix.tree)] = max(used.get((ix.corpus, ix.tree), 0.0), ix.last_used)
    out = []
    for path in sorted((Path(results) / "trees").glob("[!.]*/[!.]*")):
        if path.is_dir():
            corpus, key, made = path.parent.name, path.name, path.stat().st_mtime
            out.append(Tree(path, corpus, key, distinct_bytes(path), made, max(made, used.get((corpus, key), made))))
    return out


def _corpus(root: Path) -> dict:
    blobs = root / trees.BLOBS
    return {"corpus": root.name, "path": str(root), "bytes": distinct_bytes(root),
            "trees": sum(1 for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")),
            "blobs": sum(1 for p in blobs.iterdir() if p.is_file()) if blobs.is_dir() else 0}


def info(results: Path) -> dict:
    """The trees (per corpus, and each) and the indexes of trees, as data (bytes exact)."""
    indexes = read_tree_indexes(results)
    roots = sorted(p for p in (Path(results) / "trees").glob("[!.]*") if p.is_dir())
    return {
        "trees": {"dir": str(Path(results) / "trees"), "corpora": [_corpus(r) for r in roots],
                  "entries": [{"path": str(t.path), "corpus": t.corpus, "key": t.key, "bytes": t.bytes,
                               "made": t.made, "last_used": t.last_used} for t in read_trees(results, indexes)]},
        "tree_indexes": {"dir": str(Path(results) / TREE_INDEX),
                         "entries": [_index_entry(ix) for ix in indexes]},
    }


def _index_entry(ix: TreeIndex) -> dict:
    return {"path": str(ix.path), "corpus": ix.corpus, "system": ix.system, "key": ix.key, "tree": ix.tree,
            "bytes": ix.bytes, "built": ix.built, "last_used": ix.last_used, "whole": ix.whole,
            "listings": [str(p) for p in ix.listings]}


def evict(results: Path, chosen) -> dict:
    """Remove the indexes of trees and the trees `chosen(corpus, last_used)` selects; returns
    what was removed, its bytes, and the listings naming a removed index (for the caller to
    remove with the other indexes)."""
    indexes = read_tree_indexes(results)
    old_trees = read_trees(results, indexes)  # last uses read before any index goes
    gone = [ix for ix in indexes if chosen(ix.corpus, ix.last_used)]
    for ix in gone:
        atomic.remove_tree(ix.path)
    removed, freed = [], 0
    for root in sorted({t.path.parent for t in old_trees if chosen(t.corpus, t.last_used)}):
        with locked(root):  # no tree of this corpus is being made meanwhile
            before = distinct_bytes(root)
            for t in old_trees:
                if t.path.parent == root and chosen(t.corpus, t.last_used) and t.path.is_dir():
                    atomic.remove_tree(t.path)
                    removed.append(t)
            for left in sorted(root.glob(".*.tmp")):  # a killed job's: none is made while the lock is held
                if left.is_dir():
                    atomic.remove_tree(left)
            blobs = root / trees.BLOBS
            for blob in sorted(blobs.iterdir()) if blobs.is_dir() else []:
                if blob.is_file() and blob.stat().st_nlink == 1:  # no tree links it any more
                    blob.unlink()
            freed += before - distinct_bytes(root)
    listings = sorted({p for ix in gone for p in ix.listings})
    return {"tree_indexes": [{"path": str(ix.path), "bytes": ix.bytes, "last_used": ix.last_used} for ix in gone],
            "trees": [{"path": str(t.path), "bytes": t.bytes, "last_used": t.last_used} for t in removed],
            "listings": [str(p) for p in listings],
            "freed_bytes": sum(ix.bytes for ix in gone) + freed}
