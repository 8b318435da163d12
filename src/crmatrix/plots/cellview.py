"""What a chart of a few arms draws from when it is handed their cells' statistics
(`crmatrix.stages.cell_stats`) instead of the phase matrix: the same `crmatrix.plots.sources.View`,
built by the matrix's own code (`crmatrix.analysis.matrix.rows.plain`,
`crmatrix.analysis.matrix.pooling.pooled`).

A cell file changes only with its run and the baseline's, so a chart fed its own arms' cells
is not redrawn when another arm is added; the phase matrix changes with any run.

What needs every arm of a row is left out: there is no Holm correction, no family and no
detectable effect (no chart fed cells reads them), and which arm a cell repeats is decided
among the arms handed in alone. A forest, handed its arm and the baseline, so marks only an
arm that repeats the baseline (`≡ baseline`, the same mark as the matrix's: the baseline is
the matrix's first column); that it repeats another compared arm is the matrix's to say.
"""

from __future__ import annotations

from pathlib import Path

from crmatrix import CrmatrixError, atomic
from crmatrix.analysis import stats
from crmatrix.analysis.matrix import pooling, rows
from crmatrix.plots.sources import View
from crmatrix.results.cell import METRIC, Cell


def view(paths: list[Path], baseline_arm: str, arms: list[str], splits: dict[str, str] | None = None) -> View:
    """The statistics in the cell files `paths` as the charts read them. `arms`: the arms drawn,
    in the order that decides which one an identical arm repeats (the baseline first); a cell of
    another arm is refused. `splits`: dataset -> its structural split, if any (the config's
    facts, which pool apart as in the matrix)."""
    if not paths:
        raise CrmatrixError("plots: expected the statistics of at least one cell file, got none")
    order = [baseline_arm] + [a for a in arms if a != baseline_arm]
    table: dict[tuple[str, str], dict[str, Cell]] = {}
    for p in paths:
        doc = Cell.from_json(atomic.read_json(Path(p)), str(p))
        if doc.arm not in order:
            raise CrmatrixError(f"{p}: a cell of arm {doc.arm!r}, expected one of {', '.join(order)}")
        table.setdefault((doc.dataset, doc.system), {})[doc.arm] = doc
    found = [rows.plain(d, s, docs, order, baseline_arm, (splits or {}).get(d))
             for (d, s), docs in sorted(table.items())]
    present = {a for docs in table.values() for a in docs}
    drawn = [a for a in order if a in present]
    return View(metric=METRIC, baseline_arm=baseline_arm, arms=tuple(drawn), rows=tuple(found),
                pooled=tuple(pooling.pooled(found, drawn, baseline_arm)), alpha=stats.ALPHA,
                source=f"the cells of arms {', '.join(drawn)} ({len(paths)} files, {paths[0]}, ...)")
