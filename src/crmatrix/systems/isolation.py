"""What an external system sees of its corpus: a read-only mirror of the shared tree, placed
where walking up from it finds no project, and checked for writes after every job.

A tool is handed `{corpus}` = the mirror, never the shared `results/corpora/NAME/tree`: a tool
walking up from the tree it was given (to find "its" repository, a config file, a `.git`)
would otherwise reach crmatrix's own checkout and answer with crmatrix's files, and a tool
writing an index beside the files it reads (`.code-intel/index.db`) would change the corpus
every later job scores on.

The mirror lies under the scratch directory (`CRMATRIX_SCRATCH`, else the system's temporary
directory), at a path that is a function of the shared tree's path alone: the index job and
the query jobs reading its index see one `{corpus}`, so absolute paths a tool records in its
index still name files when its queries run. It costs no copy: each file is a hard link to
the shared file (a copy only where the filesystem refuses a link), whose mode loses its write
bits, so it is read-only under both names (except to root, whom modes do not stop). Its
directories stay writable, so a tool copying the tree (to make a git repository of it in its
`{index}`) gets a copy it can write. There is one mirror per system and shared tree, made once,
under a lock, and made again when the shared tree no longer matches it (a corpus made anew).

What a tool writes anyway is caught: the shared tree and the mirror are fingerprinted (each
entry's kind, size, mtime and inode: a stat per entry, no reads) before the tool runs and
after it stopped, and a difference stops the job in one line naming the first file added,
changed or removed. The mirror is then discarded, so the next job gets a clean one; a file
written through a hard link changed the shared tree itself, which the line says to delete.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

from crmatrix import CrmatrixError

SCRATCH_ENV = "CRMATRIX_SCRATCH"
SOURCE, LOCK = "source.txt", ".lock"  # beside a mirror: the tree it mirrors; the lock of its jobs
_SAFE = re.compile(r"[^A-Za-z0-9_.-]")
KEEP_OUT = "a tool must keep its files in its {home} or {index}"


def scratch_root() -> Path:
    """Where mirrors live: outside any git checkout, so nothing above a mirror is a project."""
    given = os.environ.get(SCRATCH_ENV)
    root = Path(given or tempfile.gettempdir()).resolve()
    for d in (root, *root.parents):
        if (d / ".git").exists():
            what = f"{SCRATCH_ENV}={root}" if given else f"the temporary directory {root} (set {SCRATCH_ENV})"
            raise CrmatrixError(f"{what}: lies inside the git checkout {d}, which a tool walking up from its corpus "
                                "would find (expected a directory outside any project)")
    return root / f"crmatrix-mirrors-{os.getuid()}"


def mirror_path(tree: Path, system: str) -> Path:
    """The mirror of the shared `tree` (resolved) for `system` (its name in the config): the
    same path for every job of that system on that tree, and another system's jobs never see
    what one wrote."""
    tree = Path(tree).resolve()
    tag = hashlib.sha256(str(tree).encode()).hexdigest()[:16]
    return scratch_root() / _SAFE.sub("_", system or "system") / f"{tree.parent.name}-{tag}" / tree.name


def fingerprint(root: Path) -> dict[str, tuple]:
    """Relative path -> (kind, size, mtime_ns, inode) of each entry under `root` (a link: its
    target), by stat alone: fast on trees of thousands of files."""
    out: dict[str, tuple] = {}
    pending = [(str(root), "")]
    while pending:
        d, prefix = pending.pop()
        with os.scandir(d) as entries:
            for e in entries:
                rel = prefix + e.name
                if e.is_symlink():
                    out[rel] = ("link", os.readlink(e.path))
                elif e.is_dir(follow_symlinks=False):
                    out[rel] = ("dir",)
                    pending.append((e.path, rel + "/"))
                else:
                    st = e.stat(follow_symlinks=False)
                    out[rel] = ("file", st.st_size, st.st_mtime_ns, st.st_ino)
    return out


def _contents(fp: dict[str, tuple]) -> dict[str, tuple]:
    """A fingerprint without inodes: what a mirror made of copies shares with its tree."""
    return {rel: v[:3] for rel, v in fp.items()}


def difference(before: dict[str, tuple], after: dict[str, tuple]) -> str | None:
    """The first entry that differs (files before directories, then by path), and how; None: none."""
    changed = [rel for rel in before.keys() | after.keys() if before.get(rel) != after.get(rel)]
    if not changed:
        return None
    rel = min(changed, key=lambda r: ((before.get(r) or after[r])[0] == "dir", r))
    return f"{rel} ({'added' if rel not in before else 'removed' if rel not in after else 'changed'})"


def _place(src: str, dst: str) -> None:
    """`dst` as a hard link to `src` (a copy where the filesystem refuses one), read-only."""
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)
    os.chmod(dst, stat.S_IMODE(os.stat(dst).st_mode) & ~0o222)


def _make(tree: Path, dest: Path) -> None:
    for d, dirs, files in os.walk(tree):
        rel = os.path.relpath(d, tree)
        target = dest / rel if rel != "." else dest
        target.mkdir(exist_ok=True)
        for name in [*dirs, *files]:
            src = os.path.join(d, name)
            if os.path.islink(src):
                os.symlink(os.readlink(src), target / name)
            elif name in files:
                _place(src, str(target / name))


def _remove(path: Path) -> None:
    if not path.exists():
        return
    for d, _, _ in os.walk(path):  # a tool may have made a directory of its mirror read-only
        os.chmod(d, 0o755)
    shutil.rmtree(path)


def _prune(system_dir: Path) -> None:
    """Remove the system's mirrors of trees that are gone (a test's, a results/ deleted)."""
    for parent in sorted(system_dir.iterdir()):
        source = parent / SOURCE
        if source.is_file() and not Path(source.read_text()).is_dir():
            with locked(parent):
                for entry in parent.iterdir():
                    if entry.is_dir():
                        _remove(entry)
                    elif entry.name != LOCK:
                        entry.unlink()


@contextlib.contextmanager
def locked(parent: Path) -> Iterator[None]:
    """`parent`'s lock (made on first use) held exclusively, across processes: the jobs making
    or removing what lies in it (a mirror, a repository's trees, crmatrix.versions.trees) take turns."""
    parent.mkdir(parents=True, exist_ok=True)
    with open(parent / LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


class Mirror:
    """The mirror of one shared tree for one job: `path` is what the tool sees; `check` after
    the tool stopped."""

    def __init__(self, tree: Path, system: str):
        self.tree = Path(tree).resolve()
        self.path = mirror_path(self.tree, system)
        with locked(self.path.parent):
            self.tree_before = fingerprint(self.tree)
            if not self.path.is_dir() or _contents(fingerprint(self.path)) != _contents(self.tree_before):
                staged = Path(tempfile.mkdtemp(dir=self.path.parent, prefix=f".{self.path.name}.", suffix=".tmp"))
                try:
                    _make(self.tree, staged)
                    _remove(self.path)
                    os.replace(staged, self.path)
                finally:
                    _remove(staged)
                (self.path.parent / SOURCE).write_text(str(self.tree))
            self.before = fingerprint(self.path)
        _prune(self.path.parent.parent)


    def ceiling(self) -> Path:
        """The directory git must not look in or above (GIT_CEILING_DIRECTORIES)."""
        return self.path.parent

    def check(self, who: str = "") -> None:
        """Raise, in one line naming a file (and `who` wrote it, when given: else the caller's
        error names the job), if the shared tree or the mirror changed since the job began."""
        shown = _shown(self.tree)
        wrote = difference(self.tree_before, fingerprint(self.tree))
        if wrote:  # through a hard link: the tree no longer holds what its manifest says
            where, after = f"the shared corpus tree {shown}", f"; delete {shown} to have it made again"
        else:
            wrote = difference(self.before, fingerprint(self.path))
            where, after = f"its corpus, the mirror {self.path} of {shown}", ""
        if wrote:
            with locked(self.path.parent):
                _remove(self.path)
            raise CrmatrixError(f"{who + ' ' if who else ''}wrote into {where}: {wrote} ({KEEP_OUT}){after}")


def _shown(path: Path) -> str:
    """`path` relative to the working directory (the project, in the workflow) when inside it."""
    try:
        return str(path.relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)
