"""plot_latency: search latency per system, method and arm, and quality against latency
(`crmatrix.plots.latency`); quality against cost per model (`crmatrix.plots.modelcost`): from every
run's times (`crmatrix.results.times`, which cell_stats writes beside each cell)."""

from __future__ import annotations

from pathlib import Path

from crmatrix.plots import frames, latency, modelcost, sources
from crmatrix.plots.style import save
from crmatrix.results.times import RunTimes


def run(*, times: list[Path], stats: list[Path], out_dir: Path, models: dict[str, dict[str, str]], runtime: Path
        ) -> list[Path]:
    """`out_dir`/latency.*, `out_dir`/quality-latency.* and `out_dir`/models.*; `times`: every run's
    times; `models`: system -> arm -> the config's name of its model; else as
    `crmatrix.stages.plot_rows.run`."""
    loaded, view = [RunTimes.read(Path(p)) for p in times], sources.view(stats)
    charts = {**latency.draw(loaded, view, models),
              "models": modelcost.chart(frames.model_costs(loaded, view, models), metric=view.metric)}
    return [path for stem, chart in charts.items() for path in save(chart, Path(out_dir) / stem, runtime)]
