"""plot_arms: one dataset's headline metric per arm on one system (`crmatrix.plots.arms`)."""

from __future__ import annotations

from pathlib import Path

from crmatrix.plots import arms, sources
from crmatrix.plots.style import save


def run(*, stats: list[Path], out: Path, system: str, dataset: str, models: dict[str, str], runtime: Path
        ) -> list[Path]:
    """`stats`: the files holding the row's statistics (`crmatrix.plots.sources`); `out`: the
    chart's path without its suffix; `models`: arm -> the config's name of the system's model
    under it; `runtime`: where the HTML finds the Vega runtime (`crmatrix.plots.runtime`)."""
    return save(arms.draw(sources.view(stats), system=system, dataset=dataset, models=models), out, runtime)
