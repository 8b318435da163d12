"""Writes that are all-or-nothing: a killed job never leaves a file a later job reads as complete."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any


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


def write_text(path: Path, text: str) -> None:
    """Write to a temporary sibling, fsync, then rename over the target."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, FILE_MODE)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def write_json(path: Path, obj: Any) -> None:
    write_text(path, json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


def write_jsonl(path: Path, rows: list[dict]) -> None:
    write_text(path, "".join(dumps_canonical(r) + "\n" for r in rows))


def read_jsonl(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


@contextlib.contextmanager
def staged_dir(dest: Path) -> Iterator[Path]:
    """Yield an empty temporary directory beside `dest`; on success it becomes `dest`.

    On any error the temporary directory is removed and `dest` is left as it was, so a
    failed fetch leaves nothing a later job could mistake for a finished corpus.
    """
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".tmp"))
    try:
        yield tmp
        os.chmod(tmp, 0o777 & ~_umask())
        if dest.exists():
            shutil.rmtree(dest)
        os.replace(tmp, dest)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


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
