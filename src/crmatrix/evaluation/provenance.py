"""What a result was made from, recorded in every run so a number can be traced and repeated."""

from __future__ import annotations

import platform
from pathlib import Path

from crmatrix import __version__, atomic
from crmatrix.corpora.languages import dominant_language

INSTALL_INFO = "crmatrix-install.json"  # what a system's own environment holds (written by crmatrix.systems.install)


def installed(venv: Path | None) -> dict | None:
    """The record of what the environment `venv` holds, None without one."""
    return atomic.read_json(Path(venv) / INSTALL_INFO) if venv else None


def system_version(system_conf: dict, install: dict | None, system_run: dict | None) -> str:
    """What version of the system answered, in one line: the packages its install asked for,
    else the server an MCP system reported, else (the builtin engine, a plugin) crmatrix's."""
    if install:
        return install["version"]
    server = (system_run or {}).get("server")
    if server:
        return f"{server['name']} {server['version']}"
    return f"crmatrix {__version__}"


def record(*, corpus: str, manifest: dict, dataset: str, dataset_file: Path, system: str,
           system_conf: dict, arm: str, env: dict, params: dict, system_run: dict | None = None,
           install: dict | None = None, split: dict | None = None) -> dict:
    """`install`: what the system's own environment holds (crmatrix.systems.install), if it has one.
    `split`: which of the dataset file's tasks were asked ({split, seed}; None: all)."""
    return {
        "crmatrix_version": __version__,
        "python": platform.python_version(),
        "corpus": {"name": corpus, "pin": manifest["pin"], "content_hash": manifest["content_hash"],
                   "language": dominant_language(manifest, min_files=1)},
        "dataset": {"name": dataset, "file": str(dataset_file), "sha256": atomic.sha256_file(Path(dataset_file)),
                    **(split or {"split": "all", "seed": None})},
        "system": {"name": system, **system_conf},
        "system_version": system_version(system_conf, install, system_run),
        "install": install,
        "arm": {"name": arm, "env": dict(sorted(env.items()))},
        "model": (system_run or {}).get("model"),
        "system_run": system_run,
        "config_hash": atomic.hash_obj(params),
    }
