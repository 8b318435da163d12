"""A path pin: a local directory, read in place; its fingerprint tells the workflow it changed."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

from crmatrix import CrmatrixError
from crmatrix.corpora.blobs import file_blob_id
from crmatrix.corpora.pins.pin import register
from crmatrix.corpora.tree import MAX_FILE_BYTES, SKIP_DIRS


def fetch_path(path: str) -> tuple[Path, dict]:
    src = Path(path)
    if not src.is_dir():
        raise CrmatrixError(f"path corpus {path}: not a directory")
    return src, {"source": str(src.resolve())}


@register("path")
def fetch_pinned(spec: dict, scratch: Path, mirrors: list[str], registries: dict) -> tuple[Path, dict]:
    """A path pin's directory, read in place (`scratch` unused)."""
    return fetch_path(spec["path"])


def path_fingerprint(path: str) -> str:
    """A change detector for a `path` corpus, so an edit re-runs its jobs: a hash of every file's
    path (relative: the same tree elsewhere has the same fingerprint) and content key (git's blob
    id, crmatrix.corpora.blobs), so an edit that keeps a file's size and restores its mtime is
    still seen. The directories no corpus holds (crmatrix.corpora.tree.SKIP_DIRS) are passed
    over, and so are the bytes of a file over the size a corpus keeps (its size stands for it:
    the corpus skips it as too large whatever it holds); a symlinked directory is not followed
    (its target path is its content, as git stores a link)."""
    h = hashlib.sha256()
    root = Path(path)
    for dirpath, dirnames, filenames in os.walk(root):
        kept = sorted(d for d in dirnames if d not in SKIP_DIRS)
        links = [d for d in kept if os.path.islink(os.path.join(dirpath, d))]
        dirnames[:] = [d for d in kept if d not in links]
        for name in sorted(filenames + links):
            p = Path(dirpath, name)
            h.update(f"{p.relative_to(root).as_posix()}\0{_content_key(p)}\n".encode())
    return h.hexdigest()


def _content_key(path: Path) -> str:
    try:
        st = path.lstat()
        if stat.S_ISREG(st.st_mode) and st.st_size > MAX_FILE_BYTES:
            return f"size {st.st_size}"
        return file_blob_id(path)
    except OSError:  # vanished, unreadable, or no file (a FIFO, a socket): the fetch will say which
        return "unreadable"
