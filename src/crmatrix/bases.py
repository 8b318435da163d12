"""Builds kept to grow the next one from.

A repository's symbol store and index are each one Snakemake output, built again whole when a
commit is added, and Snakemake removes an output before its job runs. So each such build is
kept — as hard links, no bytes copied where the cache shares the results' filesystem — under
`<cache_dir>/bases/<kind>/<key>/<name>`, and the next build of that kind and key grows from
the kept one that shares the most rows with it (`crmatrix.grown`). The key holds what a
build's rows depend on besides themselves — the code, the knobs, the model — so a build never
grows from one of other code or knobs; `name` is the build's own hash. Which base a build
grows from changes what it costs, never its bytes, so picking by overlap is safe.

A kept build is written whole (staged, then renamed) and never modified. A build that holds
every row of its base supersedes it, and the base is removed (renamed away first, so no reader
finds it half-gone); a base that cannot be read is skipped with a warning, and the build runs
without it.
"""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Callable
from pathlib import Path

from crmatrix import CrmatrixError, atomic

log = logging.getLogger(__name__)

ROOT = "bases"  # under the configured cache_dir


def _root(cache_dir: Path, kind: str, key: str) -> Path:
    return Path(cache_dir) / ROOT / kind / key


def pick(cache_dir: Path, kind: str, key: str, rows: int, shared: Callable[[Path], int]) -> Path | None:
    """The kept build of this kind and key with the most rows in common (`shared(dir)`; ties:
    the first by name) with a build of `rows` rows, None if none shares a tenth of them: a
    base is read whole, and one that shares a few files by chance (an empty `__init__.py` of
    another repository) would cost more than it saves."""
    root = _root(cache_dir, kind, key)
    least = max(1, -(-rows // 10))  # a tenth of the rows, rounded up
    best, most = None, 0
    for candidate in sorted(root.iterdir()) if root.is_dir() else []:
        if candidate.name.startswith("."):  # being written or removed
            continue
        try:
            n = shared(candidate)
        except (OSError, ValueError, KeyError, CrmatrixError) as e:
            log.warning("%s: not a build to grow from (%s); skipped", candidate, e)
            continue
        if n >= least and n > most:
            best, most = candidate, n
    if best is not None:
        os.utime(best)  # used: `crmatrix cache evict --older-than` goes by the last use
    return best


def keep(built: Path, cache_dir: Path, kind: str, key: str, name: str) -> Path | None:
    """Keep the finished build `built` as a base; None (with a warning) if it cannot be kept:
    a cache that cannot take it costs the next build time, never this one its result."""
    dest = _root(cache_dir, kind, key) / name
    if dest.is_dir():
        return dest
    built = Path(built)
    try:
        with atomic.staged_dir(dest) as d:
            for path in sorted(built.rglob("*")):
                target = d / path.relative_to(built)
                if path.is_dir():
                    target.mkdir()
                    continue
                try:
                    os.link(path, target)
                except OSError:  # another filesystem, or links refused: copy
                    shutil.copy2(path, target)
    except (OSError, CrmatrixError) as e:
        log.warning("%s: not kept to grow the next build from (%s)", dest, e)
        return None
    return dest


def retire(base: Path) -> None:
    """Remove a base the build that grew from it supersedes."""
    try:
        atomic.remove_tree(base)
    except OSError as e:
        log.warning("%s: superseded, but not removed (%s)", base, e)


def kept(cache_dir: Path) -> list[Path]:
    """Every kept build, of every kind and key."""
    return sorted(p for p in (Path(cache_dir) / ROOT).glob("*/*/*") if p.is_dir() and not p.name.startswith("."))


def unshared_bytes(base: Path) -> int:
    """The bytes removing `base` frees: its files no result links to as well."""
    stats = [p.stat() for p in Path(base).rglob("*") if p.is_file()]
    return sum(s.st_size for s in stats if s.st_nlink == 1)
