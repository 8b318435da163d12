"""Writes that are all-or-nothing: a killed job never leaves a file a later job reads as complete."""

from __future__ import annotations

import contextlib
import errno
import glob
import hashlib
import json
import os
import resource
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from crmatrix import CrmatrixError, indented


def dumps_canonical(obj: Any) -> str:
    """JSON with sorted keys and fixed separators: equal data gives equal bytes."""
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def hash_obj(obj: Any) -> str:
    return sha256_bytes(dumps_canonical(obj).encode())


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# mkstemp creates 0600 files; results are meant to be as readable as any file the user writes.
FILE_MODE = 0o666 & ~_umask()


def _drop_stale(dest: Path, prefix: str, files: bool = False) -> None:
    """Remove the temporaries (`PREFIX` + tempfile's 8 random characters + `.tmp` beside `dest`)
    that a killed job writing `dest` left: its staged directories, and with `files` its files.
    Only one job ever writes a given output, so one found on starting is never another writer's.
    Files are spared by default: files written by `write_text` may be shared, such as the
    tokenizer file in a cache. The 8 characters exactly: `.NAME.gz.x1y2z3a4.tmp` is another
    output's."""
    for stale in dest.parent.glob(f"{glob.escape(prefix)}{'[a-z0-9_]' * 8}.tmp"):
        if stale.is_dir() and not stale.is_symlink():
            shutil.rmtree(stale, ignore_errors=True)
        elif files:
            with contextlib.suppress(FileNotFoundError):
                stale.unlink()


def drop_stale_temporaries(output: Path) -> None:
    """Remove what a killed earlier run of the job writing `output` left beside it, files and
    staged directories (`_drop_stale`); called by the job that owns `output` as it starts."""
    output = Path(output)
    _drop_stale(output, f".{output.name}.", files=True)


# A full disk, a full quota, a file over the size limit (`ulimit -f`): Python's OSError for a
# failed write names no file, so the writers here say which output and how much it needed.
SPACE_ERRORS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})


def space_error(where: str | Path, err: OSError, what: str) -> CrmatrixError:
    """One line for a write that ran out of room: the output, what it needed (`what`), and the
    limit it hit (the file size limit, or the filesystem's free space)."""
    if err.errno == errno.EFBIG:
        limit, _ = resource.getrlimit(resource.RLIMIT_FSIZE)
        room = (f"a file may hold at most {limit:,} bytes here: the file size limit, ulimit -f"
                if limit != resource.RLIM_INFINITY else "larger than its filesystem allows")
    else:
        existing = next(p for p in (Path(where).absolute(), *Path(where).absolute().parents) if p.exists())
        room = f"{shutil.disk_usage(existing).free:,} bytes free on its filesystem"
    return CrmatrixError(f"{where}: {what}: {err.strerror} ({room}); make room and run again")


def _written(path: Path) -> tuple[int, str | None]:
    """The bytes of the files under `path`, and the last one written (relative; None: none)."""
    files = [(f.stat(), f) for f in path.rglob("*") if f.is_file() and not f.is_symlink()]
    last = max(files, key=lambda sf: sf[0].st_mtime_ns, default=None)
    return sum(st.st_size for st, _ in files), last and last[1].relative_to(path).as_posix()


def write_bytes(path: Path, data: bytes) -> None:
    """Write to a temporary sibling (`.NAME.*.tmp`), fsync, then rename over the target.

    A rename within one directory is atomic on local and network filesystems (NFS, Lustre)
    alike, so a reader sees the old file, or the new one whole, never a torn one.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, FILE_MODE)
        os.replace(tmp, path)
    except BaseException as e:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        if isinstance(e, OSError) and e.errno in SPACE_ERRORS:
            raise space_error(path, e, f"cannot write its {len(data):,} bytes") from None
        raise


def write_text(path: Path, text: str) -> None:
    write_bytes(path, text.encode("utf-8"))


def write_json(path: Path, obj: Any) -> None:
    """`obj` as json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) writes it (crmatrix.indented)."""
    write_text(path, indented.dumps(obj) + "\n")


def write_jsonl(path: Path, rows: list[dict]) -> None:
    write_text(path, "".join(dumps_canonical(r) + "\n" for r in rows))


def _corrupt(path: Path, where: str, err: Exception) -> CrmatrixError:
    return CrmatrixError(f"{path}{where}: not valid JSON ({err}); it is corrupt or was written by "
                         "something else: delete it and run again")


def read_json(path: Path) -> Any:
    """A JSON file we wrote; a corrupt one is a one-line error naming it, not a traceback."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        raise _corrupt(path, "", e) from None


def read_jsonl(path: Path) -> list[dict]:
    rows = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except ValueError as e:
                    raise _corrupt(path, f": line {n}", e) from None
    return rows


@contextlib.contextmanager
def staged_dir(dest: Path) -> Iterator[Path]:
    """Yield an empty temporary directory beside `dest`; on success it becomes `dest`.

    On any error the temporary directory is removed and `dest` is left as it was, so a
    failed fetch leaves nothing a later job could mistake for a finished corpus.
    """
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    _drop_stale(dest, f".{dest.name}.")
    tmp = Path(tempfile.mkdtemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".tmp"))
    try:
        yield tmp
        os.chmod(tmp, 0o777 & ~_umask())
        if dest.exists():
            shutil.rmtree(dest)
        os.replace(tmp, dest)
    except OSError as e:
        if e.errno not in SPACE_ERRORS:
            raise
        # writes go one at a time: the file written last is the one that failed, and the step
        # needs more than what was written so far
        size, last = _written(tmp)
        raise space_error(dest, e, f"ran out of room writing {last or 'its first file'}, after {size:,} bytes "
                                   "of it, and needs more") from None
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


@contextlib.contextmanager
def scratch_dir(dest: Path) -> Iterator[Path]:
    """Yield an empty working directory for the job that writes `dest` (a clone, a download
    to unpack), beside it as `.scratch.NAME.*.tmp`; it is removed when the job is done. Not in
    /tmp: a job killed mid-way (no `finally` runs) leaves it where the next run of the job
    finds and removes it, instead of a clone's worth of bytes nobody ever frees. The
    directories made for it alone go with it (a failed job leaves no empty husk)."""
    dest = Path(dest)
    made = [d for d in dest.parents if not d.exists()]  # deepest first
    dest.parent.mkdir(parents=True, exist_ok=True)
    _drop_stale(dest, f".scratch.{dest.name}.")
    tmp = Path(tempfile.mkdtemp(dir=dest.parent, prefix=f".scratch.{dest.name}.", suffix=".tmp"))
    try:
        yield tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        for d in made:
            with contextlib.suppress(OSError):  # not empty: the job's outputs are in it
                d.rmdir()


def remove_tree(path: Path) -> None:
    """Remove a directory, renamed out of the way first: a half-deleted one never looks whole.
    Its directories are made writable (a tool may have left one read-only); its files keep
    their modes, since unlinking needs no write bit and a hard-linked file's mode is also its
    other names' (a blob store's)."""
    path = Path(path)
    hidden = Path(tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp"))
    os.replace(path, hidden / path.name)
    for root, dirs, _ in os.walk(hidden):  # top-down: each directory made readable before it is walked
        for d in dirs:
            sub = os.path.join(root, d)
            if not os.path.islink(sub):
                os.chmod(sub, stat.S_IMODE(os.lstat(sub).st_mode) | stat.S_IRWXU)
    shutil.rmtree(hidden)


def prune_empty_parents(path: Path, stop: Path) -> None:
    """Remove now-empty directories from path's parent up to (not including) stop.

    After a failed job, the workflow engine has removed the outputs but not the
    directories it made for them; this keeps `results/` free of such husks.
    """
    stop = Path(stop).resolve()
    d = Path(path).resolve().parent
    while d != stop and stop in d.parents:
        try:
            d.rmdir()
        except OSError:
            break
        d = d.parent
