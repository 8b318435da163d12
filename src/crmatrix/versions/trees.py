"""A repository corpus's commits as plain directory trees, for the tools that read files.

Each commit's candidate files (commits.json: path, blob) make one tree, named by the hash of
that (path, blob) list (`tree_key`), never by the commit: commits whose candidate files are
the same share one tree, and so one index of it. A tree is made once, under
`results/trees/CORPUS/KEY` (`trees_root`, beside the repository's `results/repos/CORPUS`),
and costs no copy per tree: each distinct blob is written once into the root's blob store
(`.blobs/ID`, read-only) and every tree's file is a hard link to it (a copy only where the
filesystem refuses a link). Each tree is a git checkout too, for the tools that read git
(`_git_checkout`). A tool never sees the tree itself: it gets the read-only mirror
crmatrix.systems.isolation makes of it, as of any corpus tree.

The trees are a cache, no rule's output: made by whichever job first needs one (an index job,
an evaluation of a tool without an index), under a lock, whole or not at all.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterable
from pathlib import Path

from crmatrix import CrmatrixError, atomic
from crmatrix.corpora.pins.gitstore import BlobReader
from crmatrix.systems.isolation import locked
from crmatrix.versions.repository import GIT, commit_files

BLOBS = ".blobs"
FILE_TIME = 86400  # every tree file's mtime (1970-01-02): fixed, and older than its index
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
                if path.startswith("/") or ".." in Path(path).parts or Path(path).parts[0] == ".git":
                    raise CrmatrixError(f"{repository}: file {path!r} lies outside its tree")
                target = staged / path
                target.parent.mkdir(parents=True, exist_ok=True)
                try:
                    os.link(blobs / blob, target)
                except OSError:
                    shutil.copy2(blobs / blob, target)
            _git_checkout(Path(repository) / GIT, staged)
            os.replace(staged, dest)
        finally:
            shutil.rmtree(staged, ignore_errors=True)
    return dest


def _git_checkout(git_dir: Path, tree: Path) -> None:
    """Make `tree` a git checkout of its files, for the tools that read git (`git ls-files`, the
    HEAD commit): a repository borrowing the store's objects (`alternates`: nothing copied), one
    commit holding the tree's files (its date fixed, so its id is the files'), an index matching
    them. Its stat checks are loose (`core.trustctime` off, `core.checkStat` minimal) and the files
    older than the index, so that `git status` on the read-only mirror has nothing to refresh
    and writes nothing."""
    tree = tree.resolve()
    # no user's or system's git config (autocrlf, signing, hooks): the same checkout on every host
    env = {**os.environ, "GIT_DIR": str(tree / ".git"), "GIT_WORK_TREE": str(tree),
           "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "crmatrix", "GIT_AUTHOR_EMAIL": "crmatrix@localhost",
           "GIT_COMMITTER_NAME": "crmatrix", "GIT_COMMITTER_EMAIL": "crmatrix@localhost",
           "GIT_AUTHOR_DATE": "1970-01-02T00:00:00Z", "GIT_COMMITTER_DATE": "1970-01-02T00:00:00Z"}

    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], env=env, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise CrmatrixError(f"{tree}: git {' '.join(args)} failed: {done.stderr.strip()}")
        return done.stdout.strip()

    git("init", "-q", "--template=", "-b", "main", str(tree))
    (tree / ".git" / "objects" / "info").mkdir(parents=True, exist_ok=True)
    (tree / ".git" / "objects" / "info" / "alternates").write_text(str((git_dir / "objects").resolve()) + "\n")
    for key, value in (("core.trustctime", "false"), ("core.checkStat", "minimal"), ("gc.auto", "0")):
        git("config", key, value)
    for f in tree.rglob("*"):  # older than the index: none is "racily clean", so none is read again
        if f.is_file() and ".git" not in f.relative_to(tree).parts:
            os.utime(f, (FILE_TIME, FILE_TIME), follow_symlinks=False)
    git("add", "-A")
    commit = git("commit-tree", git("write-tree"), "-m", "crmatrix: the commit's candidate files")
    git("update-ref", "HEAD", commit)


def _store_blobs(git_dir: Path, blobs: list[str], store: Path) -> None:
    """Each blob not yet in the store, written once, read-only."""
    missing = [b for b in blobs if not (store / b).is_file()]
    if not missing:
        return
    with BlobReader(git_dir) as reader:
        for blob in missing:
            atomic.write_bytes(store / blob, reader.read(blob))
            os.chmod(store / blob, stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
