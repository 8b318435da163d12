"""plot_rows: the two charts of each row of one system, in one job: each dataset's headline metric
per arm (`crmatrix.plots.arms`) and where each query's first relevant hit moved under each arm
(`crmatrix.plots.transitions`).

Both read the phase matrix, which changes with any run, so whenever one of a system's row
charts is drawn again all are: one job draws them all and pays Python's imports and the Vega
renderer's start (most of a lone chart's job) once, not once per chart."""

from __future__ import annotations

from pathlib import Path

from crmatrix.plots import arms, sources, transitions
from crmatrix.plots.style import save


def run(*, stats: list[Path], out_dir: Path, system: str, datasets: list[str], models: dict[str, str],
        runtime: Path, kinds: tuple[str, ...] = ("arms", "transitions")) -> list[Path]:
    """`stats`: the files holding the rows' statistics (`crmatrix.plots.sources`); `out_dir`: the
    charts' directory (each chart is `<kind>/<system>/<dataset>` in it, the stems of
    `crmatrix.plots.names`); `models`: arm -> the config's name of the system's model under it;
    `runtime`: where the HTML finds the Vega runtime (`crmatrix.plots.runtime`); `kinds`: the
    system's row charts (`names.row_kinds`: arms alone for a system that runs the baseline alone)."""
    view, out_dir, written = sources.view(stats), Path(out_dir), []
    for dataset in datasets:
        written += save(arms.draw(view, system=system, dataset=dataset, models=models),
                        out_dir / "arms" / system / dataset, runtime)
        if "transitions" in kinds:
            written += save(transitions.draw(view, system=system, dataset=dataset),
                            out_dir / "transitions" / system / dataset, runtime)
    return written
