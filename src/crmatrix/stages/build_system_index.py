"""build_system_index: an external system's own index command, once per (corpus, index-time env)."""

from __future__ import annotations

from pathlib import Path

from crmatrix.systems.external import build_index, models_by_name


def run(*, system: str, system_conf: dict, tree: Path, env: dict, out: Path, home_dir: Path,
        venv: Path | None = None, models: list[Path] | None = None) -> dict:
    """`env` is the arm's part that the system's index sees (`systems.index_env`); `venv` the
    environment the system's `install` made; `models` the prepared model directories
    (results/models/NAME) its index command's `{model:NAME}` placeholders name."""
    return build_index(system_conf, corpus_dir=Path(tree), env=env, out=Path(out), home_dir=Path(home_dir),
                       name=system, venv_dir=Path(venv) if venv else None,
                       model_dirs=models_by_name(models))
