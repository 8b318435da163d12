"""install_system: the virtual environment of a system the DAG installs (`install:` in its config)."""

from __future__ import annotations

from pathlib import Path

from crmatrix.config.entries import Install
from crmatrix.systems import install


def run(*, system: str, install_conf: Install, out: Path, mirrors: list[str]) -> dict:
    """`install_conf`: the system's `install` (crmatrix.systems.install.job_install, in the workflow)."""
    return install.create(install_conf, Path(out), name=system, mirrors=mirrors)
