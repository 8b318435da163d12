"""plot_rows: the two charts of each row of one system, in one job: each dataset's headline metric
per arm (`crmatrix.plots.arms`) and where each query's first relevant hit moved under each arm
(`crmatrix.plots.transitions`).

Both read the phase matrix, which changes with any run, so whenever one of a system's row
charts is drawn again all are: one job draws them all and pays Python's imports and the Vega
renderer's start (most of a lone chart's job) once, not once per chart.

The renderer (vl-convert) draws one chart at a time whatever the threads calling it, so a job
given more than one core draws its datasets in that many processes, forked once the imports and
the statistics are loaded. A process forked from one whose renderer has started would wait on
the renderer's threads forever (they are not forked), so a process that has drawn a chart
draws the rest itself. (It is the last job of an added arm, behind the matrix: the seed
matrix's 48 row charts took 17 s on one core.)"""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from crmatrix.plots import arms, sources, style, transitions


def run(*, stats: list[Path], out_dir: Path, system: str, datasets: list[str], models: dict[str, str],
        runtime: Path, kinds: tuple[str, ...] = ("arms", "transitions"), workers: int = 1) -> list[Path]:
    """`stats`: the files holding the rows' statistics (`crmatrix.plots.sources`); `out_dir`: the
    charts' directory (each chart is `<kind>/<system>/<dataset>` in it, the stems of
    `crmatrix.plots.names`); `models`: arm -> the config's name of the system's model under it;
    `runtime`: where the HTML finds the Vega runtime (`crmatrix.plots.runtime`); `kinds`: the
    system's row charts (`names.row_kinds`: arms alone for a system that runs the baseline alone);
    `workers`: the processes drawing them (the job's threads). The charts' bytes are the same
    whatever `workers`."""
    view = sources.view(stats)
    draw = _Rows(view, Path(out_dir), system, models, runtime, tuple(kinds))
    workers = min(workers, len(datasets))
    if workers <= 1 or style.renderer_started():
        return [path for dataset in datasets for path in draw(dataset)]
    global _forked
    _forked = draw  # the forked processes inherit it: a task sends a dataset's name, not the statistics
    try:
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
            return [path for paths in pool.map(_draw_forked, datasets) for path in paths]
    finally:
        _forked = None


_forked: _Rows | None = None


def _draw_forked(dataset: str) -> list[Path]:
    return _forked(dataset)


class _Rows:
    """Draws one dataset's row charts."""

    def __init__(self, view: sources.View, out_dir: Path, system: str, models: dict[str, str], runtime: Path,
                 kinds: tuple[str, ...]) -> None:
        self.view, self.out_dir, self.system, self.models, self.runtime, self.kinds = (
            view, out_dir, system, models, runtime, kinds)

    def __call__(self, dataset: str) -> list[Path]:
        written = style.save(arms.draw(self.view, system=self.system, dataset=dataset, models=self.models),
                             self.out_dir / "arms" / self.system / dataset, self.runtime)
        if "transitions" in self.kinds:
            written += style.save(transitions.draw(self.view, system=self.system, dataset=dataset),
                                  self.out_dir / "transitions" / self.system / dataset, self.runtime)
        return written
