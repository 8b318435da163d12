"""plot_matrix: every chart of the phase matrix (SVG, PNG, self-contained HTML) and one page of them all."""

from __future__ import annotations

from pathlib import Path

from crmatrix import atomic
from crmatrix.plots import catalog, gallery, names
from crmatrix.plots.style import save


def run(*, matrix: Path, matrix_md: Path, runs: list[Path], out_dir: Path, gallery_out: Path,
        sweeps: dict[str, dict] | None = None) -> list[str]:
    """Draws the charts under `out_dir` (`out_dir/<stem>.svg|png|html`); returns their stems.
    `sweeps`: the config's grids (`crmatrix.pipeline.sweeps.grids`), one chart per sweep and system."""
    m = atomic.read_json(Path(matrix))
    charts = catalog.charts(m, [atomic.read_json(Path(p)) for p in runs], sweeps)
    figures = []
    for stem, chart in charts.items():
        svg = save(chart, Path(out_dir) / stem)[0]
        figures.append((stem, names.CAPTIONS[names.kind(stem)], svg.read_text(encoding="utf-8")))
    order = {k: i for i, k in enumerate(names.CAPTIONS)}
    figures.sort(key=lambda f: order[names.kind(f[0])])
    atomic.write_text(Path(gallery_out), gallery.page(f"Phase matrix — {m['metric']}", Path(matrix_md).read_text(
        encoding="utf-8"), figures))
    return list(charts)
