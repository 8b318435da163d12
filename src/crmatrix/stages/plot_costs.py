"""plot_costs: each system's latency and tokens read per query beside grep-and-read
(`crmatrix.plots.costs`), and its failed queries by kind (`crmatrix.plots.failures`), both in
the leaderboard's order of systems, from the baseline arm's runs (one job reads them once)."""

from __future__ import annotations

from pathlib import Path

from crmatrix.analysis import versus
from crmatrix.plots import costs, failures, frames
from crmatrix.plots.style import save
from crmatrix.results.run import Run


def run(*, runs: list[Path], out_dir: Path, reference: str, headline_method: str, runtime: Path) -> list[Path]:
    """`out_dir`/costs.* and `out_dir`/failures.*; else as `crmatrix.stages.plot_leaderboard.run`."""
    docs = [Run.read(Path(p)) for p in runs]
    frames.check_comparable(docs)
    order = list(versus.compare(docs, reference, headline_method).systems)
    by = versus.rows_by_system(docs, headline_method)
    charts = {"costs": costs.draw(by, order), "failures": failures.draw(by, order)}
    return [path for stem, chart in charts.items() for path in save(chart, Path(out_dir) / stem, runtime)]
