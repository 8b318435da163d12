"""What a result was made from, recorded in every run so a number can be traced and repeated."""

from __future__ import annotations

import platform
from pathlib import Path

from crmatrix import __version__, atomic
from crmatrix.languages import dominant_language


def record(*, corpus: str, manifest: dict, dataset: str, dataset_file: Path, system: str,
           system_conf: dict, arm: str, env: dict, params: dict, system_run: dict | None = None) -> dict:
    return {
        "crmatrix_version": __version__,
        "python": platform.python_version(),
        "corpus": {"name": corpus, "pin": manifest["pin"], "content_hash": manifest["content_hash"],
                   "language": dominant_language(manifest, min_files=1)},
        "dataset": {"name": dataset, "file": str(dataset_file), "sha256": atomic.sha256_file(Path(dataset_file))},
        "system": {"name": system, **system_conf},
        "arm": {"name": arm, "env": dict(sorted(env.items()))},
        "model": (system_run or {}).get("model"),
        "system_run": system_run,
        "config_hash": atomic.hash_obj(params),
    }
