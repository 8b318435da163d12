"""A public benchmark's rows, read through the `datasets` library: a local JSON, JSONL or
parquet file, or a hub dataset `hf:OWNER/NAME` (split `train`; `hf:OWNER/NAME@SPLIT` for
another). Hub access is off unless the user turns it on (`HF_DATASETS_OFFLINE=0`): a run
never downloads data it was not told to.

The library's own cache would keep Arrow copies under the user's home; each read uses a
temporary one instead, so a dataset stage leaves nothing outside its outputs.
"""

from __future__ import annotations

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
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")  # read by the library at import
    import datasets as hf

    hf.disable_progress_bars()
    text = str(source)
    with tempfile.TemporaryDirectory(prefix="crmatrix-hf-") as cache:
        if is_hub(text):
            name, _, split = text.removeprefix(HUB_PREFIX).partition("@")
            try:
                return hf.load_dataset(name, split=split or "train", cache_dir=cache).to_list()
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
        try:
            return hf.load_dataset(builder, data_files=str(path.resolve()), split="train", cache_dir=cache).to_list()
        except Exception as e:
            cause = e.__cause__ or e
            raise CrmatrixError(f"{path}: not readable as {builder}: {type(cause).__name__}: "
                                f"{str(cause).splitlines()[0] if str(cause) else ''}") from None
