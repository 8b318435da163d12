"""plot_heatmap: Δ against the baseline for every dataset row and arm (`crmatrix.plots.heatmap`)."""

from __future__ import annotations

from pathlib import Path

from crmatrix.plots import heatmap, sources
from crmatrix.plots.style import save


def run(*, stats: list[Path], out: Path, runtime: Path) -> list[Path]:
    """As `crmatrix.stages.plot_rows.run`."""
    return save(heatmap.draw(sources.view(stats)), out, runtime)
