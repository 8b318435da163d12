"""prepare_model: a model directory with `model.json`, made by the kind of model its format names."""

from __future__ import annotations

from pathlib import Path

from crmatrix.config.entries import ModelDef
from crmatrix.embed.backends import prepare


def run(name: str, conf: dict, out: Path) -> dict:
    """`name` is the model's key under `models:`, named by every error; `conf` its definition as
    the job's parameter carries it (`ModelDef.to_conf`)."""
    return prepare(name, ModelDef.from_conf(conf, f"models.{name}"), Path(out))
