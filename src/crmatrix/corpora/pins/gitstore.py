"""Many commits of one repository, from multi-commit bundles, read by blob without a checkout.

A SWE-bench bundle (`<owner>+<repo>@swebench.bundle`) holds every base commit of a
repository, each at depth 1 under the tag `c-<sha>`, the commits sharing their objects. A
bundle whose commits are shallow cannot be cloned (git checks the parents it was not given):
its commits are fetched into one bare repository, the store, every one of them named in its
`shallow` file as where history stops, and read from there by blob: `git ls-tree` lists a
commit's files with their blob ids (content keys: crmatrix.corpora.blobs) and sizes without
reading them, and `git cat-file --batch` reads the blobs asked for, one process for all.
Bundles are found as `fetch_git` finds them: `<owner>+<repo>@*.bundle` in the mirror directories.

A history bundle (`<owner>+<repo>@history.bundle`) holds a contiguous history under its one head
`HEAD`, cut where `<owner>+<repo>@history.shallow` (beside it, when the history is cut) names the
boundary commits. A store that a dataset asks a history of (crmatrix.datasets.history) fetches
it too, as the branch `HISTORY`, its boundaries added to the store's `shallow` file: every commit
of the history is then a version the store can list and read.
"""

from __future__ import annotations

import logging
import os
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from crmatrix import CrmatrixError, atomic
from crmatrix.corpora.blobs import BLOB_ID
from crmatrix.corpora.pins.git import bundle_heads, bundle_refs, bundle_stem, git_reason, mirror_bundles
from crmatrix.corpora.tree import (
    MAX_FILE_BYTES,
    content_skip_reason,
    file_record,
    in_skipped_dir,
    manifest_part,
    path_filter,
)

log = logging.getLogger(__name__)

GIT_TIMEOUT_S = 600  # a fetch of the largest bundle (sympy's, 25 MB) takes seconds
HISTORY = "refs/heads/history"  # a history bundle's head, in a store
HISTORY_STEM = "history"  # <owner>+<repo>@history.bundle, and its .shallow file


def git(args: list, what: str, stdin: bytes | None = None) -> bytes:
    """git's output for `args` (each made a string); a failure is an error starting with `what`."""
    try:
        return subprocess.run(["git", *map(str, args)], capture_output=True, check=True, input=stdin,
                              timeout=GIT_TIMEOUT_S).stdout
    except subprocess.CalledProcessError as e:
        raise CrmatrixError(f"{what}: {git_reason(e)}") from None



def history_bundle(url: str, mirrors: list[str]) -> Path | None:
    """The first mirror's history bundle of `url` (`<owner>+<repo>@history.bundle`), None when no
    mirror holds one."""
    for mirror in mirrors:
        bundle = Path(mirror) / f"{bundle_stem(url)}@{HISTORY_STEM}.bundle"
        if bundle.is_file():
            return bundle
    return None


def history_boundaries(bundle: Path) -> list[str]:
    """The commits where a history bundle's history is cut (its `.shallow` file beside it; none
    when the history goes back to the first commit)."""
    shallow = Path(bundle).with_suffix(".shallow")
    return shallow.read_text().split() if shallow.is_file() else []


def fetch_history(bundle: Path, repo: Path) -> None:
    """A history bundle's head (`HEAD`, or its one ref: `git bundle create B main` makes one)
    fetched into the bare repository `repo` as `HISTORY`, its boundaries added to `repo`'s
    shallow file (git refuses a cut history without them)."""
    refs = [ref for _, ref in bundle_refs(Path(bundle))]
    if "HEAD" not in refs and len(refs) != 1:
        raise CrmatrixError(f"{bundle}: a history bundle has HEAD or one ref; it has {', '.join(refs) or 'none'}")
    shallow = Path(repo) / "shallow"
    known = shallow.read_text().split() if shallow.is_file() else []
    shallow.write_text("".join(f"{c}\n" for c in sorted({*known, *history_boundaries(bundle)})))
    ref = "HEAD" if "HEAD" in refs else refs[0]
    git(["--git-dir", repo, "fetch", "-q", bundle, f"+{ref}:{HISTORY}"], f"{bundle}: cannot be fetched")


def bundle_commits(url: str, mirrors: list[str]) -> dict[str, Path]:
    """Every commit the mirrors' bundles of `url` hold (`<owner>+<repo>@*.bundle`, as `fetch_git`
    looks for them), each with the first bundle that lists it (mirrors in order, bundles by
    name); read from their headers (`bundle_refs`), nothing fetched. An unreadable bundle is logged
    and passed over, as `fetch_git` passes it over."""
    found: dict[str, Path] = {}
    for mirror in mirrors:
        for bundle in mirror_bundles(Path(mirror), bundle_stem(url)):
            try:
                heads = bundle_heads(bundle)
            except CrmatrixError as e:
                log.warning("passed over %s", e)
                continue
            for commit in sorted(heads):
                found.setdefault(commit, bundle)
    return found


def fetch_commits(bundles: Iterable[Path], dest: Path, history: Path | None = None) -> list[str]:
    """A bare repository at `dest` holding every commit the bundles list, each as the tag
    `c-<sha>` and each a shallow boundary, and the whole history of the history bundle
    `history` when one is given (`fetch_history`): one or the other, as a bundle's commit is a
    shallow boundary, where a walk of the history would stop. Returns the bundles' commits, sorted.
    Made beside `dest` and renamed into place, so a failure leaves nothing (and an earlier `dest`
    as it was).

    Each bundle is fetched whole (all its heads in one fetch): a fetch of one tag of a
    multi-commit bundle brought the objects but failed here (../shared/RECIPES.md).
    """
    refs = {Path(b): bundle_refs(Path(b)) for b in dict.fromkeys(bundles)}
    if refs and history is not None:
        raise CrmatrixError(f"{dest}: a store takes its commits from a history bundle or from commit bundles, "
                            "not both")
    commits = sorted({commit for listed in refs.values() for commit, _ in listed})
    with atomic.staged_dir(Path(dest)) as stage:
        git(["init", "-q", "--bare", stage], f"{dest}: git init")
        (stage / "shallow").write_text("".join(f"{c}\n" for c in commits))
        for bundle, listed in refs.items():
            if listed:
                specs = [f"+{ref}:refs/tags/c-{commit}" for commit, ref in listed]
                git(["--git-dir", stage, "fetch", "-q", bundle, *specs], f"{bundle}: cannot be fetched")
        if history is not None:
            fetch_history(history, stage)
    return commits


def has_commits(repo: Path, commits: Iterable[str]) -> list[str]:
    """Those of `commits` that the bare repository `repo` holds as commits, in their order."""
    asked = list(commits)
    out = git(["--git-dir", repo, "cat-file", "--batch-check"], f"{repo}: cat-file",
              "".join(f"{c}\n" for c in asked).encode()).decode().splitlines()
    return [c for c, line in zip(asked, out, strict=True) if line.split()[1:2] == ["commit"]]


@dataclass(frozen=True)
class TreeFile:
    """A file of a commit: its path, git blob id and size in bytes."""

    path: str
    blob: str
    size: int


@dataclass(frozen=True)
class Listing:
    """A commit's files as a corpus selects them (crmatrix.corpora.tree's rules), known from its
    tree alone: the files kept (by path), those skipped (`{path, reason}`) and how many files
    the globs left out. Binary and non-UTF-8 files are told only by their bytes (`write_commit`)."""

    files: list[TreeFile]
    skipped: list[dict]
    excluded_by_glob: int


# git's modes: a regular file, an executable one, a symlink (its blob is the target's path)
_FILE_MODES, _LINK_MODE = (b"100644", b"100755"), b"120000"


def commit_files(repo: Path, commit: str, include: list[str], exclude: list[str]) -> Listing:
    """The files of `commit` in the bare repository `repo` (`fetch_commits`) that a corpus with
    these globs holds, from `git ls-tree -r -l`: the directories no corpus holds are passed
    over, a file over MAX_FILE_BYTES is skipped as too large, and a symlink is skipped
    (`symlink`, where a checkout read by crmatrix.corpora.tree follows one to a file in the
    tree); a submodule is no file."""
    out = git(["--git-dir", repo, "ls-tree", "-r", "-l", "-z", "--full-tree", commit],
               f"{repo}: commit {commit}")
    selected = path_filter(include, exclude)
    files, skipped, excluded = [], [], 0
    for entry in filter(None, out.split(b"\0")):
        meta, _, raw = entry.partition(b"\t")
        mode, _, blob, size = meta.split()
        path = os.fsdecode(raw)
        if mode not in (*_FILE_MODES, _LINK_MODE) or in_skipped_dir(path):
            continue
        if not selected(path):
            excluded += 1
        elif mode == _LINK_MODE:
            skipped.append({"path": path, "reason": "symlink"})
        elif int(size) > MAX_FILE_BYTES:
            skipped.append({"path": path, "reason": "too-large"})
        else:
            files.append(TreeFile(path, blob.decode(), int(size)))
    return Listing(sorted(files, key=lambda f: f.path), sorted(skipped, key=lambda s: s["path"]), excluded)


class BlobReader:
    """Blobs of a repository by id, through one `git cat-file --batch` process kept open (a
    context manager: closing ends it). Each blob is asked for and read whole before the next,
    so neither pipe can fill while the other waits."""

    def __init__(self, repo: Path):
        self.repo = Path(repo)
        self._proc = subprocess.Popen(["git", "--git-dir", str(self.repo), "cat-file", "--batch"],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def read(self, blob: str) -> bytes:
        if not BLOB_ID.fullmatch(blob):
            raise CrmatrixError(f"{self.repo}: {blob!r} is not a blob id (40 hex digits)")
        try:
            self._proc.stdin.write(f"{blob}\n".encode())
            self._proc.stdin.flush()
        except BrokenPipeError:
            pass  # git has ended: the empty header below says why
        header = self._proc.stdout.readline().split()
        if not header:
            why = self._proc.stderr.read().decode(errors="replace").strip() if self._proc.poll() is not None else ""
            raise CrmatrixError(f"{self.repo}: git cat-file ended ({why or 'no reason given'})")
        if header[1] != b"blob":
            what = "no such object" if header[1] == b"missing" else f"a {header[1].decode()}, not a blob"
            raise CrmatrixError(f"{self.repo}: {blob}: {what}")
        size = int(header[2])
        data = self._proc.stdout.read(size + 1)  # the blob, then git's newline
        if len(data) != size + 1:
            raise CrmatrixError(f"{self.repo}: {blob}: git cat-file sent {len(data)} of {size + 1} bytes")
        return data[:-1]

    def close(self) -> None:
        if self._proc.poll() is None:
            self._proc.stdin.close()
            try:
                self._proc.wait(timeout=GIT_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        for pipe in (self._proc.stdin, self._proc.stdout, self._proc.stderr):
            pipe.close()

    def __enter__(self) -> BlobReader:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def read_blobs(repo: Path, blobs: Iterable[str]) -> dict[str, bytes]:
    """The bytes of each blob asked for (each read once), by id."""
    with BlobReader(repo) as reader:
        return {blob: reader.read(blob) for blob in dict.fromkeys(blobs)}


def write_commit(repo: Path, commit: str, dest: Path, include: list[str], exclude: list[str]) -> dict:
    """The files of `commit` that a corpus with these globs holds, written under `dest` (a
    directory the caller owns), and the manifest's file part for them: what
    crmatrix.corpora.tree.select_files gives for a checkout of the commit (but for symlinks,
    see `commit_files`)."""
    listing = commit_files(repo, commit, include, exclude)
    files, skipped = [], list(listing.skipped)
    with BlobReader(repo) as reader:
        for f in listing.files:
            data = reader.read(f.blob)
            if reason := content_skip_reason(data):
                skipped.append({"path": f.path, "reason": reason})
                continue
            out = Path(dest) / f.path
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(data)
            files.append(file_record(f.path, data))
    return manifest_part(files, skipped, listing.excluded_by_glob)
