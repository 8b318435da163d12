"""Builds kept to grow the next one from.

A repository's symbol store and index are each one Snakemake output, built again whole when a
commit is added, and Snakemake removes an output before its job runs. So each such build is
kept — as hard links, no bytes copied where the cache shares the results' filesystem — under
`<cache_dir>/bases/<kind>/<key>/<name>`, and the next build of that kind and key grows from
the kept one that shares the most rows with it (`crmatrix.versions.grown`). The key holds what a
build's rows depend on besides themselves — the code, the knobs, the model — so a build never
grows from one of other code or knobs; `name` is the build's own hash. Which base a build
grows from changes what it costs, never its bytes, so picking by overlap is safe.

A kept build is written whole (staged, then renamed) and never modified. A build that holds
every row of its base supersedes it, and the base is removed (renamed away first, so no reader
finds it half-gone); a base that cannot be read is skipped with a warning, and the build runs
without it. A build holds a shared lock (flock) on its base while it reads it, and removing a
base takes the exclusive one without waiting: a base another build is reading — a second
project sharing the cache_dir, with a Snakemake lock of its own — stays, for `crmatrix cache
evict`, rather than vanish under that build.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

from crmatrix import CrmatrixError, atomic

log = logging.getLogger(__name__)

ROOT = "bases"  # under the configured cache_dir


def _root(cache_dir: Path, kind: str, key: str) -> Path:
    return Path(cache_dir) / ROOT / kind / key


def _hold(directory: Path) -> int | None:
    """A descriptor of `directory` under a shared lock (closing it releases the lock), None if
    the directory is gone or was removed while the lock was awaited."""
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    except FileNotFoundError:
        return None
    with contextlib.suppress(OSError):  # a filesystem without locks: read unguarded, as before them
        fcntl.flock(fd, fcntl.LOCK_SH)
    try:
        if os.stat(directory).st_ino == os.fstat(fd).st_ino:
            return fd
    except FileNotFoundError:
        pass
    os.close(fd)
    return None


@contextlib.contextmanager
def pick(cache_dir: Path, kind: str, key: str, rows: int, shared: Callable[[Path], int]) -> Iterator[Path | None]:
    """The kept build of this kind and key with the most rows in common (`shared(dir)`; ties:
    the first by name) with a build of `rows` rows, None if none shares a tenth of them: a
    base is read whole, and one that shares a few files by chance (an empty `__init__.py` of
    another repository) would cost more than it saves. Held until the block ends, so that a
    build superseding it meanwhile leaves it (`retire`); the candidates are scored unheld, so
    that scoring (every build of the kind does it) never keeps a superseded base from going."""
    root = _root(cache_dir, kind, key)
    least = max(1, -(-rows // 10))  # a tenth of the rows, rounded up
    ranked = []
    for candidate in sorted(root.iterdir()) if root.is_dir() else []:
        if candidate.name.startswith("."):  # being written or removed
            continue
        try:
            n = shared(candidate)
        except (OSError, ValueError, KeyError, CrmatrixError) as e:
            if candidate.is_dir():  # not one retired while it was read
                log.warning("%s: not a build to grow from (%s); skipped", candidate, e)
            continue
        if n >= least:
            ranked.append((-n, candidate.name, candidate))
    for _, _, candidate in sorted(ranked):
        with _held(candidate) as base:
            if base is not None:  # else retired since it was scored: the next best
                yield base
                return
    yield None


def keep(built: Path, cache_dir: Path, kind: str, key: str, name: str) -> Path | None:
    """Keep the finished build `built` as a base; None (with a warning) if it cannot be kept:
    a cache that cannot take it costs the next build time, never this one its result."""
    dest = _root(cache_dir, kind, key) / name
    if dest.is_dir():
        return dest
    try:
        with atomic.staged_dir(dest) as d:
            link_tree(Path(built), d)
    except (OSError, CrmatrixError) as e:
        log.warning("%s: not kept to grow the next build from (%s)", dest, e)
        return None
    return dest


def link_tree(source: Path, into: Path) -> None:
    """Every file under `source` into the existing directory `into`, as hard links where the
    filesystem allows (a kept build and the results that hold it share their bytes), else copies."""
    for path in sorted(source.rglob("*")):
        target = into / path.relative_to(source)
        if path.is_dir():
            target.mkdir()
            continue
        try:
            os.link(path, target)
        except OSError:  # another filesystem, or links refused: copy
            shutil.copy2(path, target)


def held(cache_dir: Path, kind: str, key: str, name: str):
    """The kept build of this kind, key and name, held (as `pick` holds its pick) until the
    block ends, so that `retire` leaves it meanwhile; None if there is none."""
    return _held(_root(cache_dir, kind, key) / name)


@contextlib.contextmanager
def _held(path: Path) -> Iterator[Path | None]:
    """`path` under a shared lock until the block ends, marked used; None if it is gone."""
    fd = _hold(path)
    try:
        if fd is not None:
            os.utime(path)  # used: `crmatrix cache evict --older-than` goes by the last use
        yield None if fd is None else path
    finally:
        if fd is not None:
            os.close(fd)


def retire(base: Path) -> bool:
    """Remove a base (superseded, or evicted) unless a build is reading it; whether it was."""
    try:
        fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        atomic.remove_tree(base)
        return True
    except BlockingIOError:
        log.info("%s: in use by another build; left for `crmatrix cache evict`", base)
    except OSError as e:
        log.warning("%s: not removed (%s)", base, e)
    finally:
        os.close(fd)
    return False


def kept(cache_dir: Path) -> list[Path]:
    """Every kept build, of every kind and key."""
    return sorted(p for p in (Path(cache_dir) / ROOT).glob("*/*/*") if p.is_dir() and not p.name.startswith("."))
