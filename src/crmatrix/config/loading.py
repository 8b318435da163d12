"""Loading a config: `from_dict` and `load` run the three steps of `crmatrix.config` (schema,
resolve, check); `clamp_warnings` says which arm values the engine clamps."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from crmatrix.config.matrix import Matrix


def from_dict(raw: dict | None, source: str = "config", machine_mirrors: list[str] | None = None) -> Matrix:
    """The checked Matrix of a config's contents (as read from YAML); `source` names it in errors.
    The mirror directories its bundles are looked for in are gathered here, once: the config's
    `git_mirrors`, then the machine's (`machine_mirrors`, by default CRMATRIX_GIT_MIRRORS's)."""
    from crmatrix.config import check, resolve, schema
    from crmatrix.pipeline import locations

    cfg = schema.apply(raw, source)
    machine = locations.mirrors() if machine_mirrors is None else machine_mirrors
    return check.check(resolve.resolve(cfg, source, resolve.mirrors(cfg, machine)))


def load(path: str | Path) -> Matrix:
    from crmatrix.config.yamlfile import read_yaml

    return from_dict(read_yaml(path), str(path))


def clamp_warnings(matrix: Matrix) -> list[str]:
    """One line per arm value the builtin engine clamps into its range: the config is valid,
    but that arm does not measure the value it names."""
    return [f"arms.{name}: {note}" for name, arm in matrix.arms.items() for note in arm.knobs.notes]
