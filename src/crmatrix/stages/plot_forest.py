"""plot_forest: one arm's Δ per dataset on one system and its random-effects pools (`crmatrix.plots.forest`),
from the cells of that arm and the baseline alone (`crmatrix.plots.cellview`), so another arm redraws it not."""

from __future__ import annotations

from pathlib import Path

from crmatrix.plots import cellview, forest
from crmatrix.plots.style import save


def run(*, cells: list[Path], out: Path, system: str, arm: str, baseline_arm: str, splits: dict[str, str],
        runtime: Path) -> list[Path]:
    """`cells`: the cells of `arm` and of the baseline on every dataset of `system`; `splits`:
    dataset -> its structural split (pooled apart); else as `crmatrix.stages.plot_rows.run`."""
    view = cellview.view(cells, baseline_arm, [arm], splits)
    return save(forest.draw(view, system=system, arm=arm), out, runtime)
