"""build_system_index: an external system's own index command, once per (corpus, index-time env);
on a repository of many commits, once per distinct tree of its commits (crmatrix.versions.commits)."""

from __future__ import annotations

from pathlib import Path

from crmatrix.config.settings import SystemSpec
from crmatrix.systems.external import build_index, models_by_name


def run(*, system: str, system_conf: dict, tree: Path, env: dict, out: Path, home_dir: Path,
        venv: Path | None = None, models: list[Path] | None = None) -> dict:
    """`system_conf`: the system's settings as its index job gets them (`ExternalSystem.index_conf`);
    `env` the arm's part that the system's index sees (`systems.index_env`); `venv` the
    environment the system's `install` made; `models` the prepared model directories
    (results/models/NAME) its index command's `{model:NAME}` placeholders name."""
    spec = SystemSpec.from_conf(system_conf, f"systems.{system}")
    return build_index(spec, corpus_dir=Path(tree), env=env, out=Path(out), home_dir=Path(home_dir), name=system,
                       venv_dir=Path(venv) if venv else None,
                       model_dirs=models_by_name(models))


def run_commits(*, system: str, system_conf: dict, repository: Path, env: dict, out: Path, cache: Path,
                home_dir: Path, venv: Path | None = None, models: list[Path] | None = None) -> dict:
    """The index of each distinct tree of the repository's commits, in `cache/TREE` (kept across
    runs: a tree indexed before is not indexed again), each built in its own HOME `home_dir/TREE`
    (the evaluation gives the tool the same); `out` lists them with their costs."""
    from crmatrix.versions.commits import build_indexes

    def build(tree: Path, index: Path, key: str) -> dict:
        return run(system=system, system_conf=system_conf, tree=tree, env=env, out=index,
                   home_dir=Path(home_dir) / key, venv=venv, models=models)

    return build_indexes(build, Path(repository), Path(out), Path(cache))
