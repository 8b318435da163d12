"""The project's own files an external system runs: a script its argv names, or what its
`files` option lists. Their contents are part of the system's keys, so editing such a file
re-runs what it served; a program elsewhere (on PATH, in the system's installed
environment) is pinned by its install, not by this.

A file counts when an argv element (or an `env` value) is exactly its path, relative to the
project's directory (the workflow's working directory) or absolute inside it; an element
holding a placeholder names nothing yet and is passed over. An entry of `files` may be a
directory: every file under it counts.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from crmatrix import CrmatrixError, atomic

FILES_KEY = "files"


def _inside(root: Path, text: str) -> Path | None:
    """The project file `text` names, or None (not a path, not a file, outside the project)."""
    if not text or "{" in text or "\0" in text:
        return None
    path = Path(text) if Path(text).is_absolute() else root / text
    try:
        path = path.resolve()
        if not path.is_file():
            return None
        path.relative_to(root)
    except (OSError, ValueError):
        return None
    return path


def _named(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [t for v in value for t in _named(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _named(v)]
    return []


def check(files: list[str], root: Path = Path()) -> None:
    """Each entry of `options.files` exists inside the project (config validation)."""
    root = root.resolve()
    for i, entry in enumerate(files):
        path = (root / entry).resolve()
        try:
            path.relative_to(root)
        except ValueError:
            raise CrmatrixError(f"{FILES_KEY}[{i}]: {entry!r} is outside the project ({root})") from None
        if not path.exists():
            raise CrmatrixError(f"{FILES_KEY}[{i}]: no file or directory {entry!r} "
                                f"(expected a path inside the project, relative to {root})")


@lru_cache(maxsize=4096)
def _sha256(path: Path, mtime_ns: int, size: int) -> str:  # the stat fields key the cache
    return atomic.sha256_file(path)


def _digest(path: Path) -> str:
    st = path.stat()
    return _sha256(path, st.st_mtime_ns, st.st_size)


def hashes(options: dict, argvs: dict[str, list | None], root: Path = Path()) -> dict[str, str]:
    """Project path (relative, '/'-separated) -> sha256, for each project file the given
    argv templates (and the options' `env` values) name, and each file under `options.files`."""
    root = root.resolve()
    found = {p for text in _named([*argvs.values(), options.get("env", {})]) if (p := _inside(root, text))}
    for entry in options.get(FILES_KEY, []):
        path = (root / entry).resolve()
        found |= {f for f in path.rglob("*") if f.is_file()} if path.is_dir() else {path}
    return {p.relative_to(root).as_posix(): _digest(p) for p in sorted(found)}
