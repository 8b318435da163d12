"""The registry of dataset formats: `@register("name")` on a loader, or an entry point in the
group `crmatrix.datasets`; `load` runs a format's loader and counts its drops."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path

from crmatrix import CrmatrixError
from crmatrix.datasets.tasks import Task
from crmatrix.symbols import Symbol

ENTRY_POINT_GROUP = "crmatrix.datasets"


@dataclass
class Loaded:
    """A format's tasks and the rows (or citations) it dropped, each `{row, reason, detail}`."""

    tasks: list[Task]
    dropped: list[dict] = field(default_factory=list)

    def summary(self, fmt: str) -> dict:
        """What the dataset stage reports: counts of tasks, of drops by reason, and each drop."""
        reasons = Counter(d["reason"] for d in self.dropped)
        return {"format": fmt, "tasks": len(self.tasks), "dropped": len(self.dropped),
                "dropped_by_reason": dict(sorted(reasons.items())), "drops": self.dropped}


Loader = Callable[[Path, str, dict, list[Symbol]], "Loaded | list[Task]"]
LOADERS: dict[str, Loader] = {}


def register(name: str) -> Callable[[Loader], Loader]:
    def deco(fn: Loader) -> Loader:
        LOADERS[name] = fn
        return fn

    return deco


def _loader(fmt: str, path: Path) -> Loader:
    if fmt not in LOADERS:
        for ep in entry_points(group=ENTRY_POINT_GROUP, name=fmt):
            LOADERS[fmt] = ep.load()
    if fmt not in LOADERS:
        raise CrmatrixError(f"{path}: unknown dataset format {fmt!r} (known: {', '.join(sorted(LOADERS))})")
    return LOADERS[fmt]


def load_all(path: Path, fmt: str, corpus: str, manifest: dict, symbols: list[Symbol]) -> Loaded:
    """The tasks and the dropped rows, with their reasons."""
    out = _loader(fmt, path)(Path(path), corpus, manifest, symbols)
    loaded = out if isinstance(out, Loaded) else Loaded(list(out))
    if not loaded.tasks:
        reasons = ", ".join(f"{n} {r}" for r, n in loaded.summary(fmt)["dropped_by_reason"].items())
        raise CrmatrixError(f"{path}: no task left for corpus {corpus!r}"
                            + (f" (dropped: {reasons})" if reasons else ""))
    return loaded


def load(path: Path, fmt: str, corpus: str, manifest: dict, symbols: list[Symbol]) -> list[Task]:
    return load_all(path, fmt, corpus, manifest, symbols).tasks



# The formats register themselves when imported. The import is written out, not looped over
# FORMATS, so that crmatrix.pipeline.codehash sees every format module a dataset stage runs (an edit
# of one re-runs the dataset stages).
from crmatrix.datasets import callgraph, codelens, ds1000, repoqa, sweqa  # noqa: E402,F401
