"""Results that prove their bytes: an index's checksums recorded when it is built and verified
when it is loaded, and a run's checksum written with it and checked wherever it is read.

Snakemake sees an index directory's modification time, never its contents, so bytes that
change after the build (a flipped sector, a stray write, a copy cut short) would be loaded
as they are and only show as a lower score. `record(dir)`, the last step of a build, writes
`crmatrix-checksums.json` into the directory: the size and sha256 of every file below it
(its path relative to it), whatever the build wrote, so files a later version of a build adds
are covered without more code. `verify(dir)`, the first step of a load, compares every
recorded file with it: sizes first (a stat each), then one read of each file to hash it —
once per job that loads the index, about 40 ms for the 18 MB of 12,000 vectors. A file that
appears after the build is not read by a loader built before it, so it is no mismatch (an
external tool may keep lock files beside its index).

A run file (`crmatrix.evaluation.runs.Run`) is one JSON object, read whole by every job after
it: `seal` adds `checksum`, the sha256 of the canonical JSON of everything else it holds
(`atomic.hash_obj`: sorted keys, so its layout and key order are no part of it), and `unseal`
checks it before anything is read, with the same line an altered index gets.
"""

from __future__ import annotations

import os
from pathlib import Path

from crmatrix import CrmatrixError, atomic

CHECKSUMS = "crmatrix-checksums.json"
FORMAT = "crmatrix-checksums/1"
HINT = "delete the index directory and run again"
CHECKSUM = "checksum"  # a run's key
RUN_HINT = "delete the run file and run again"


def _files(root: Path) -> dict[str, Path]:
    """Every file below root (a symlink as itself, not its target), by its path relative to root."""
    found = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            path = Path(dirpath, name)
            found[path.relative_to(root).as_posix()] = path
    found.pop(CHECKSUMS, None)
    return found


def _entry(path: Path) -> dict:
    if path.is_symlink():
        return {"link": os.readlink(path)}
    return {"bytes": path.stat().st_size, "sha256": atomic.sha256_file(path)}


def record(root: Path) -> dict:
    """Write the checksums of every file below `root` (a finished build) into it; return them."""
    root = Path(root)
    sums = {"format": FORMAT, "files": {rel: _entry(path) for rel, path in _files(root).items()}}
    atomic.write_json(root / CHECKSUMS, sums)
    return sums


def _unrecorded(where, what: str, why: str, held: str, hint: str) -> CrmatrixError:
    return CrmatrixError(f"{where}: no {what} ({why}), so {held} cannot be checked; {hint}")


def _altered(where, got: str, want: str, made: str, hint: str) -> CrmatrixError:
    return CrmatrixError(f"{where}: its bytes differ from those recorded when {made} (sha256 {got[:12]}, "
                         f"recorded {want[:12]}); {hint}")


def _recorded(root: Path) -> dict[str, dict]:
    path = root / CHECKSUMS
    if not path.is_file():
        raise _unrecorded(root, CHECKSUMS, "built by an older crmatrix, or cut short", "its files", HINT)
    sums = atomic.read_json(path)
    if not isinstance(sums, dict) or sums.get("format") != FORMAT or not isinstance(sums.get("files"), dict):
        raise CrmatrixError(f"{path}: not a checksums file (expected 'format': {FORMAT!r}); {HINT}")
    return sums["files"]


def verify(root: Path) -> None:
    """Raise the one-line error naming the first file below `root` whose bytes are not the ones
    recorded when it was built (missing, resized, altered)."""
    root = Path(root)
    files = _recorded(root)
    for rel, want in sorted(files.items()):  # every stat before any read: a cut file costs no hashing
        path = root / rel
        if not path.exists() and not path.is_symlink():
            raise CrmatrixError(f"{path}: missing (recorded when the index was built); {HINT}")
        if "link" in want:
            if not path.is_symlink() or os.readlink(path) != want["link"]:
                raise CrmatrixError(f"{path}: not the link to {want['link']} recorded when the index was built; "
                                    f"{HINT}")
        elif path.is_symlink() or path.stat().st_size != want["bytes"]:
            size = "a link" if path.is_symlink() else f"{path.stat().st_size} bytes"
            raise CrmatrixError(f"{path}: {size}, but {want['bytes']} bytes when the index was built; {HINT}")
    for rel, want in sorted(files.items()):
        if "sha256" in want:
            got = atomic.sha256_file(root / rel)
            if got != want["sha256"]:
                raise _altered(root / rel, got, want["sha256"], "the index was built", HINT)


def seal(doc: dict) -> dict:
    """A run's JSON object with its checksum: the sha256 of what it holds."""
    return {**doc, CHECKSUM: atomic.hash_obj(doc)}


def unseal(doc, where: str) -> dict:
    """A run's JSON object without its checksum, once the checksum matches what it holds; else
    the one line naming `where` (its file) and the fix."""
    if not isinstance(doc, dict):
        return doc  # not an object: the reader says what it expected
    if CHECKSUM not in doc:
        raise _unrecorded(where, f"{CHECKSUM!r}", "written by an older crmatrix, or not by crmatrix", "what it holds",
                          RUN_HINT)
    body = {k: v for k, v in doc.items() if k != CHECKSUM}
    got, want = atomic.hash_obj(body), doc[CHECKSUM]
    if got != want:
        raise _altered(where, got, str(want), "the run was written", RUN_HINT)
    return body
