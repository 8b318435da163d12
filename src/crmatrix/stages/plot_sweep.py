"""plot_sweep: one sweep's grid on one system, per dataset (`crmatrix.plots.sweep`)."""

from __future__ import annotations

from pathlib import Path

from crmatrix.plots import sources, sweep
from crmatrix.plots.style import save


def run(*, stats: list[Path], out: Path, system: str, sweep_name: str, grid: dict, runtime: Path) -> list[Path]:
    """`grid`: the sweep's axes and cells (`crmatrix.pipeline.sweeps.grids`); else as
    `crmatrix.stages.plot_arms.run`."""
    return save(sweep.draw(sources.view(stats), system=system, sweep=sweep_name, grid=grid), out, runtime)
