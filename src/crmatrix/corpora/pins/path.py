"""A path pin: a local directory, read in place; its fingerprint tells the workflow it changed."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from crmatrix import CrmatrixError


def fetch_path(path: str) -> tuple[Path, dict]:
    src = Path(path)
    if not src.is_dir():
        raise CrmatrixError(f"path corpus {path}: not a directory")
    return src, {"source": str(src.resolve())}


def path_fingerprint(path: str) -> str:
    """Cheap change detector for a `path` corpus (names, sizes, mtimes), so edits re-run its jobs."""
    h = hashlib.sha256()
    root = Path(path)
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != ".git")
        for fn in sorted(filenames):
            p = Path(dirpath, fn)
            try:
                st = p.lstat()
            except OSError:
                continue
            h.update(f"{p.relative_to(root).as_posix()}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()
