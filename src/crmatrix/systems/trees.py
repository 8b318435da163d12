"""A repository corpus's commits as plain directory trees, for the tools that read files.

Each commit's candidate files (commits.json: path, blob) make one tree, named by the hash of
that (path, blob) list (`tree_key`), never by the commit: commits whose candidate files are
the same share one tree, and so one index of it. A tree is made once, under
`results/trees/CORPUS/KEY` (`trees_root`, beside the repository's `results/repos/CORPUS`),
and costs no copy per tree: each distinct blob is written once into the root's blob store
(`.blobs/ID`, read-only) and every tree's file is a hard link to it (a copy only where the
filesystem refuses a link). A tool never sees the tree itself: it gets the read-only mirror
crmatrix.systems.isolation makes of it, as of any corpus tree.

The trees are a cache, no rule's output: made by whichever job first needs one (an index job,
an evaluation of a tool without an index), under a lock, whole or not at all.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path

from crmatrix import CrmatrixError, atomic
from crmatrix.corpora.pins.gitstore import BlobReader
from crmatrix.corpora.repository import GIT, commit_files
from crmatrix.systems.isolation import locked

BLOBS = ".blobs"
KEY_CHARS = 16


def tree_key(files: Iterable[tuple[str, str]]) -> str:
    """The name of a tree: a hash of its sorted (path, blob id) list, whatever commit holds it."""
    return atomic.hash_obj(sorted([p, b] for p, b in files))[:KEY_CHARS]


def trees_root(repository: Path) -> Path:
    """Where the trees of `results/repos/CORPUS` lie: `results/trees/CORPUS`."""
    repository = Path(repository)
    return repository.parent.parent / "trees" / repository.name


def commit_trees(repository: Path) -> dict[str, list[str]]:
    """Tree key -> the commits (sorted) whose candidate files it is, keys sorted."""
    out: dict[str, list[str]] = {}
    for commit, files in sorted(commit_files(repository).items()):
        out.setdefault(tree_key(files), []).append(commit)
    return dict(sorted(out.items()))


def materialize(repository: Path, files: list[tuple[str, str]]) -> Path:
    """The tree of these (path, blob) files of the repository, made now unless it exists."""
    root = trees_root(repository)
    dest = root / tree_key(files)
    if dest.is_dir():
        return dest
    with locked(root):
        if dest.is_dir():  # another job made it while this one waited
            return dest
        blobs = root / BLOBS
        blobs.mkdir(exist_ok=True)
        _store_blobs(Path(repository) / GIT, sorted({b for _, b in files}), blobs)
        staged = Path(tempfile.mkdtemp(dir=root, prefix=f".{dest.name}.", suffix=".tmp"))
        try:
            for path, blob in files:
                if path.startswith("/") or ".." in Path(path).parts:
                    raise CrmatrixError(f"{repository}: file {path!r} lies outside its tree")
                target = staged / path
                target.parent.mkdir(parents=True, exist_ok=True)
                try:
                    os.link(blobs / blob, target)
                except OSError:
                    shutil.copy2(blobs / blob, target)
            os.replace(staged, dest)
        finally:
            shutil.rmtree(staged, ignore_errors=True)
    return dest


def _store_blobs(git_dir: Path, blobs: list[str], store: Path) -> None:
    """Each blob not yet in the store, written once, read-only."""
    missing = [b for b in blobs if not (store / b).is_file()]
    if not missing:
        return
    with BlobReader(git_dir) as reader:
        for blob in missing:
            atomic.write_bytes(store / blob, reader.read(blob))
            os.chmod(store / blob, stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
