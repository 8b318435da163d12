"""plot_forest: one arm's Δ per dataset on one system and its random-effects pools (`crmatrix.plots.forest`)."""

from __future__ import annotations

from pathlib import Path

from crmatrix.plots import forest, sources
from crmatrix.plots.style import save


def run(*, stats: list[Path], out: Path, system: str, arm: str, runtime: Path) -> list[Path]:
    """As `crmatrix.stages.plot_arms.run`."""
    return save(forest.draw(sources.view(stats), system=system, arm=arm), out, runtime)
