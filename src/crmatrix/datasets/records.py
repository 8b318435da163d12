"""A public benchmark's rows: a local JSONL file line by line, a local JSON or parquet file
or a hub dataset `hf:OWNER/NAME` (split `train`; `hf:OWNER/NAME@SPLIT` for another) through
the `datasets` library. Hub access is off unless the user turns it on
(`HF_DATASETS_OFFLINE=0`): a run never downloads data it was not told to.

JSONL is read here rather than by the library so that a broken row is named by its line
(the library says `JSON parse error ... in row 1` of an Arrow block, or `StopIteration` for
an empty file).

The library's own cache would keep Arrow copies under the user's home; each read uses a
temporary one instead, so a dataset stage leaves nothing outside its outputs.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from crmatrix import CrmatrixError

HUB_PREFIX = "hf:"
BUILDERS = {".json": "json", ".jsonl": "json", ".parquet": "parquet"}


def is_hub(source) -> bool:
    return str(source).startswith(HUB_PREFIX)


def read_records(source) -> list[dict]:
    """The rows as dicts, in file order."""
    text = str(source)
    if is_hub(text):
        name, _, split = text.removeprefix(HUB_PREFIX).partition("@")
        try:
            return _load_dataset(name, split=split or "train")
        except Exception as e:
            offline = os.environ.get("HF_DATASETS_OFFLINE", "") not in ("", "0", "false", "False")
            why = ("hub access is off (HF_DATASETS_OFFLINE=1); set HF_DATASETS_OFFLINE=0 to download it"
                   if offline else f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
            raise CrmatrixError(f"{text}: hub dataset {name!r} cannot be loaded: {why}") from None
    path = Path(text)
    builder = BUILDERS.get(path.suffix.lower())
    if builder is None:
        raise CrmatrixError(f"{path}: expected a .json, .jsonl or .parquet file (or {HUB_PREFIX}OWNER/NAME)")
    if not path.is_file():
        raise CrmatrixError(f"{path}: no such file")
    rows = _jsonl(path) if path.suffix.lower() == ".jsonl" else None
    if rows == [] or path.stat().st_size == 0:
        raise CrmatrixError(f"{path}: empty file")
    if rows is not None:
        return rows
    try:
        return _load_dataset(builder, data_files=str(path.resolve()), split="train")
    except Exception as e:
        cause = e.__cause__ or e
        raise CrmatrixError(f"{path}: not readable as {builder}: {type(cause).__name__}: "
                            f"{str(cause).splitlines()[0] if str(cause) else ''}") from None


def _load_dataset(name: str, **kwargs) -> list[dict]:
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")  # read by the library at import
    import datasets as hf

    hf.disable_progress_bars()
    with tempfile.TemporaryDirectory(prefix="crmatrix-hf-") as cache:
        return hf.load_dataset(name, cache_dir=cache, **kwargs).to_list()


def _jsonl(path: Path) -> list:
    """One JSON value per line; blank lines are no rows. Lines end at newlines only: a JSON
    string may hold U+2028 or U+0085, where str.splitlines would cut it."""
    try:
        lines = path.read_text(encoding="utf-8").split("\n")
    except (OSError, UnicodeDecodeError) as e:
        raise CrmatrixError(f"{path}: not readable as UTF-8 text: {e}") from None
    rows = []
    for n, line in enumerate(lines, 1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as e:
                raise CrmatrixError(f"{path}: line {n}: not JSON: {e.msg} at column {e.colno}") from None
    return rows
