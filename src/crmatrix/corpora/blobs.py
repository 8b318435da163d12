"""A file's content key: git's blob id, the sha1 of `b"blob <size>\\0" + bytes`.

The same key whether the bytes come from a git tree (`git ls-tree` lists it, no file read)
or from a directory (computed here), so what is cached per file content (symbols, the
fingerprint of a path corpus) is shared between a commit of a repository and a checkout of it.
sha1 is git's choice, kept for that sharing: these keys name content a corpus already trusts
(pinned by a commit, a sha256 or a directory the user owns), they do not authenticate it.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from pathlib import Path

_CHUNK = 1 << 20
BLOB_ID = re.compile(r"[0-9a-f]{40}")


def _hasher(size: int):
    return hashlib.sha1(b"blob %d\0" % size, usedforsecurity=False)


def blob_id(data: bytes) -> str:
    """git's blob id of `data` (`git hash-object`)."""
    h = _hasher(len(data))
    h.update(data)
    return h.hexdigest()


def file_blob_id(path: Path) -> str:
    """git's blob id of a file (read in chunks), or of a symlink's target path, as git stores a link.

    Only a regular file is opened: a FIFO would block, a device could act on the read. Anything
    else raises OSError, as an unreadable file does.
    """
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        return blob_id(os.fsencode(os.readlink(path)))
    if not stat.S_ISREG(st.st_mode):
        raise OSError(f"{path}: not a regular file")
    with os.fdopen(os.open(path, os.O_RDONLY | os.O_NONBLOCK), "rb") as f:
        size = os.fstat(f.fileno()).st_size  # the open file's own: the path may have been swapped since lstat
        h = _hasher(size)
        read = 0
        while chunk := f.read(_CHUNK):
            read += len(chunk)
            h.update(chunk)
    if read != size:
        raise OSError(f"{path}: changed while it was read ({read} bytes, {size} announced)")
    return h.hexdigest()
