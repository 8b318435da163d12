"""A corpus as indexed: the pinned source narrowed by include/exclude globs, plus its manifest.

The manifest is the corpus's identity downstream: every file with its size and sha256,
per-language counts, what was skipped and why, and one content hash over all of it.

Some corpora are written out of a benchmark file rather than fetched (their dataset format
writes them: crmatrix.datasets.registry.Format.corpus_kind); the selection is the same.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable
from pathlib import Path

from wcmatch import glob as wcglob

from crmatrix import atomic
from crmatrix.corpora.languages import language_for

MAX_FILE_BYTES = 1 << 20
# Never part of a corpus: version-control and dependency/build directories.
SKIP_DIRS = {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", ".tox"}


# `**` as a whole segment spans directories, `*` and `?` stay within one name, dot files
# are ordinary files, and matching is case-sensitive on every platform.
GLOB_FLAGS = wcglob.GLOBSTAR | wcglob.DOTGLOB | wcglob.FORCEUNIX
_GLOB_LITERAL = re.compile(r"([\\\[\]])")


def path_filter(include: list[str], exclude: list[str]) -> Callable[[str], bool]:
    """Whether a corpus-relative posix path matches an include glob and no exclude glob.

    Brackets and backslashes are literal, as they always were in crmatrix globs: a file
    named `a[1].py` is written as it is named, not as a character class.
    """
    def literal(patterns: list[str]) -> list[str]:
        return [_GLOB_LITERAL.sub(r"\\\1", p) for p in patterns]

    return wcglob.compile(literal(include), flags=GLOB_FLAGS, exclude=literal(exclude) or None).match


def _skip_reason(path: Path, root: Path) -> tuple[str | None, bytes]:
    """Why `path` is not part of the corpus (None: it is, with its bytes).

    Only regular files are opened: reading a FIFO blocks forever, a socket cannot be read
    and opening a device can act on it. The type is checked on the entry (or the link's
    target) before opening, and again on the open descriptor, in case the entry was
    swapped in between; O_NONBLOCK keeps even that case from blocking.
    """
    if path.is_symlink():
        target = Path(os.path.realpath(path))
        if not target.is_relative_to(root):
            return "symlink-out-of-tree", b""
        if not target.is_file():
            return "symlink-not-a-file", b""
    elif not stat.S_ISREG(path.lstat().st_mode):
        return "not-a-regular-file", b""
    with os.fdopen(os.open(path, os.O_RDONLY | os.O_NONBLOCK), "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            return "not-a-regular-file", b""
        data = f.read(MAX_FILE_BYTES + 1)
    reason = content_skip_reason(data)
    return reason, b"" if reason else data


def content_skip_reason(data: bytes) -> str | None:
    """Why a file of these bytes is not part of a corpus (None: it is): too large, binary or not UTF-8."""
    if len(data) > MAX_FILE_BYTES:
        return "too-large"
    if b"\0" in data[:8192]:
        return "binary"
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return "non-utf8"
    return None


def in_skipped_dir(rel: str) -> bool:
    """Whether a corpus-relative posix path lies in a directory no corpus holds (SKIP_DIRS)."""
    return any(part in SKIP_DIRS for part in rel.split("/")[:-1])


def file_record(rel: str, data: bytes) -> dict:
    """A kept file as the manifest lists it."""
    return {"path": rel, "size": len(data), "sha256": atomic.sha256_bytes(data), "language": language_for(rel)}


def select_files(src: Path, dest: Path, include: list[str], exclude: list[str]) -> dict:
    """Copy the selected, readable text files of src into dest; return the manifest's file part."""
    root = Path(os.path.realpath(src))
    files, skipped, excluded = [], [], 0
    selected = path_filter(include, exclude)
    for dirpath, dirnames, filenames in os.walk(root):
        kept = sorted(d for d in dirnames if d not in SKIP_DIRS)
        # A symlinked directory is never followed (it may lead out of the tree or into a
        # loop) but, where os.walk is silent, it is counted; globs select files, so it is
        # listed whatever they say, for the user to see what was not read.
        links = {d for d in kept if os.path.islink(os.path.join(dirpath, d))}
        skipped += [{"path": Path(dirpath, d).relative_to(root).as_posix(), "reason": "symlink-to-directory"}
                    for d in sorted(links)]
        dirnames[:] = [d for d in kept if d not in links]
        for fn in sorted(filenames):
            p = Path(dirpath, fn)
            rel = p.relative_to(root).as_posix()
            if not selected(rel):
                excluded += 1
                continue
            reason, data = _skip_reason(p, root)
            if reason:
                skipped.append({"path": rel, "reason": reason})
                continue
            out = dest / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(data)
            files.append(file_record(rel, data))
    return manifest_part(files, skipped, excluded)


def manifest_part(files: list[dict], skipped: list[dict], excluded: int) -> dict:
    """The manifest's file part from the kept files, the skipped ones (`{path, reason}`) and
    the count of files the globs left out."""
    files = sorted(files, key=lambda f: f["path"])
    skipped = sorted(skipped, key=lambda f: f["path"])
    languages: dict[str, int] = {}
    for f in files:
        lang = f["language"] or "other"
        languages[lang] = languages.get(lang, 0) + 1
    skipped_counts: dict[str, int] = {}
    for s in skipped:
        skipped_counts[s["reason"]] = skipped_counts.get(s["reason"], 0) + 1
    return {
        "files": files,
        "languages": dict(sorted(languages.items())),
        "skipped": skipped,
        "skipped_counts": dict(sorted(skipped_counts.items())),
        "excluded_by_glob": excluded,
        "content_hash": content_hash(files),
    }


def content_hash(files: list[dict]) -> str:
    """One hash over a manifest's files (each path with its sha256): the corpus's identity."""
    return atomic.hash_obj([[f["path"], f["sha256"]] for f in files])
