"""plot_gallery: one page with what the matrix can tell, every chart and the matrix's tables."""

from __future__ import annotations

from pathlib import Path

from crmatrix import atomic
from crmatrix.plots import gallery, names, power
from crmatrix.results.matrix import Matrix


def run(*, svgs: list[Path], charts_dir: Path, matrix: Path, matrix_md: Path, out: Path) -> list[str]:
    """`svgs`: every chart's SVG under `charts_dir`, shown grouped by kind in the order
    `names.CAPTIONS` lists the kinds; returns their stems in that order."""
    figures = []
    for svg in map(Path, svgs):
        stem = svg.relative_to(charts_dir).with_suffix("").as_posix()
        figures.append((stem, names.CAPTIONS[names.kind(stem)], svg.read_text(encoding="utf-8")))
    order = {k: i for i, k in enumerate(names.CAPTIONS)}
    figures.sort(key=lambda f: order[names.kind(f[0])])
    m = Matrix.read(Path(matrix))
    atomic.write_text(Path(out), gallery.page(f"Phase matrix — {m.metric}", Path(matrix_md).read_text(
        encoding="utf-8"), figures, power.panel(m.power)))
    return [f[0] for f in figures]
