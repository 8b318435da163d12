"""plot_transitions: where each query's first relevant hit moved under each arm, one dataset on one
system (`crmatrix.plots.transitions`)."""

from __future__ import annotations

from pathlib import Path

from crmatrix.plots import sources, transitions
from crmatrix.plots.style import save


def run(*, stats: list[Path], out: Path, system: str, dataset: str, runtime: Path) -> list[Path]:
    """As `crmatrix.stages.plot_arms.run`."""
    return save(transitions.draw(sources.view(stats), system=system, dataset=dataset), out, runtime)
