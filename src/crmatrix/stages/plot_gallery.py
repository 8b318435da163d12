"""plot_gallery: one page with the leaderboard, what the matrix can tell, every chart (and which
are not drawn, and why) and the matrix's tables."""

from __future__ import annotations

from pathlib import Path

from crmatrix import atomic
from crmatrix.analysis.matrix.panels import labelled, leaderboard_md
from crmatrix.plots import gallery, names, power
from crmatrix.results.matrix import PhaseMatrix


def run(*, svgs: list[Path], charts_dir: Path, matrix: Path, matrix_md: Path, out: Path) -> list[str]:
    """`svgs`: every chart's SVG under `charts_dir`, shown grouped by kind in the order
    `names.CAPTIONS` lists the kinds; returns their stems in that order."""
    figures = []
    for svg in map(Path, svgs):
        stem = svg.relative_to(charts_dir).with_suffix("").as_posix()
        figures.append((stem, names.CAPTIONS[names.kind(stem)], svg.read_text(encoding="utf-8")))
    order = {k: i for i, k in enumerate(names.CAPTIONS)}
    figures.sort(key=lambda f: order[names.kind(f[0])])
    m = PhaseMatrix.read(Path(matrix))
    board = leaderboard_md(labelled(m))
    panels = (gallery.section("leaderboard", "\n".join(board)) + "\n" if board else "") + power.panel(
        m.power, m.arms, m.baseline_arm)
    arms = {}
    for r in m.rows:
        arms.setdefault(r.system, set()).update(r.cells)
    absent = names.absent({s: sorted(a) for s, a in sorted(arms.items())}, m.baseline_arm)
    atomic.write_text(Path(out), gallery.page(f"Phase matrix — {m.metric}", Path(matrix_md).read_text(
        encoding="utf-8"), figures, panels, absent))
    return [f[0] for f in figures]
