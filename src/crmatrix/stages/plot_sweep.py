"""plot_sweep: one sweep's grid on one system, per dataset (`crmatrix.plots.sweep`), from the cells of
the sweep's arms and the baseline alone (`crmatrix.plots.cellview`), so another arm redraws it not."""

from __future__ import annotations

from pathlib import Path

from crmatrix.plots import cellview, sweep
from crmatrix.plots.style import save


def run(*, cells: list[Path], out: Path, system: str, sweep_name: str, grid: dict, baseline_arm: str,
        runtime: Path) -> list[Path]:
    """`cells`: the cells of the sweep's arms and of the baseline on every dataset of `system`;
    `grid`: the sweep's axes and cells (`crmatrix.config.sweeps.grids`), whose order decides which
    cell an identical one repeats; else as `crmatrix.stages.plot_rows.run`."""
    view = cellview.view(cells, baseline_arm, [c["arm"] for c in grid["cells"]])
    return save(sweep.draw(view, system=system, sweep=sweep_name, grid=grid), out, runtime)
