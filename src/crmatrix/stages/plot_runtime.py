"""plot_runtime: the Vega runtime every chart's HTML loads, written once (`crmatrix.plots.runtime`)."""

from __future__ import annotations

from pathlib import Path

from crmatrix.plots import runtime


def run(*, out: Path) -> None:
    runtime.write(Path(out))
