"""The entries of a config that stages read typed, each read once here out of the entry as validated
(`crmatrix.config.resolve`) or out of the job parameters that carry it: a system's install
(`Install`), an embedding model's definition (`ModelDef`), a dataset's and a repository's entry as a
per-commit format's hook reads them (`DatasetEntry`, `RepositoryEntry`). Plain data on the standard
library alone, so a stage that reads one runs no more of crmatrix than it (`crmatrix.codehash`:
what an edit re-runs); the settings that need the systems and the knobs are `crmatrix.config.settings`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from crmatrix import CrmatrixError
from crmatrix.frozen import freeze


def _fields(cls: type, conf: Mapping, where: str) -> dict[str, Any]:
    """`conf`'s keys as `cls`'s fields (the schema checked them; a job's parameters hold no others)."""
    names = {f.name for f in dataclasses.fields(cls) if f.compare}
    unknown = sorted(set(conf) - names)
    if unknown:
        raise CrmatrixError(f"{where}: unknown key {unknown[0]!r} (expected some of: {', '.join(sorted(names))})")
    return dict(conf)


@dataclass(frozen=True)
class Install:
    """A system's own environment: a pinned requirement (`pip`) or a commit (`git`, `commit`,
    `subdirectory`); `constraints` a pip constraints file."""

    pip: str | None = None
    git: str | None = None
    commit: str | None = None
    subdirectory: str | None = None
    constraints: str | None = None

    @classmethod
    def from_conf(cls, conf: Mapping, where: str = "install") -> Install:
        return cls(**_fields(cls, conf, where))

    def to_conf(self) -> dict[str, str]:
        """The entry as the config writes it: the keys it sets."""
        return {k: v for k, v in dataclasses.asdict(self).items() if v is not None}


@dataclass(frozen=True)
class ModelDef:
    """An embedding model's definition (`models.NAME`): its `source`, the kind of model its
    `format` names (`crmatrix.embed.backends.KINDS`), and for format onnx its `tokenizer` (a .onnx
    source's) and `quantize`. `keys`: the keys the entry sets, in its order (`to_conf`)."""

    source: str
    format: str = "sentence-transformers"
    tokenizer: str | None = None
    quantize: str = "none"
    keys: tuple[str, ...] = dataclasses.field(default=(), compare=False, repr=False)

    @classmethod
    def from_conf(cls, conf: Mapping, where: str = "model") -> ModelDef:
        given = _fields(cls, conf, where)
        return cls(**given, keys=tuple(given))

    def to_conf(self) -> dict[str, str]:
        """The definition as the config entry wrote it (the schema's defaults filled in), its keys
        in its order: what its key hashes, and what a job's parameters hold, which Snakemake
        compares by their repr."""
        keys = self.keys or tuple(f.name for f in dataclasses.fields(self) if f.name != "keys")
        return {k: getattr(self, k) for k in keys if getattr(self, k) is not None}


@dataclass(frozen=True)
class DatasetEntry:
    """A dataset's entry as its format's `per_commit` hook reads it (`crmatrix.datasets.registry`):
    `conf` the whole entry, which its resolved entries extend; its `file`, `corpus`, `candidates`
    rule, and a history dataset's `repository` key and `history` options (None: unset)."""

    conf: Mapping[str, Any]
    file: str | None
    corpus: str | None
    candidates: str | None
    repository: str | None
    history: Mapping[str, Any] | None

    @classmethod
    def from_conf(cls, conf: Mapping) -> DatasetEntry:
        return cls(freeze(dict(conf)), conf.get("file"), conf.get("corpus"), conf.get("candidates"),
                   conf.get("repository"), freeze(conf.get("history")))


@dataclass(frozen=True)
class RepositoryEntry:
    """A `repositories:` entry as a per-commit hook reads it: where its history is cloned from
    (`git`), its `owner/name` as the benchmark's rows spell it, and its language (None: not declared)."""

    git: str
    name: str
    language: str | None
