"""What a chart draws from when it is handed cells' statistics (`crmatrix.stages.cell_stats`)
instead of the phase matrix: the same `crmatrix.plots.sources.View`, built by the matrix's own
code (`crmatrix.analysis.matrix.rows`, `crmatrix.analysis.matrix.pooling`).

A cell file changes only with its run and the baseline's, so a chart fed its own cells is not
redrawn when a cell it does not draw is added; the phase matrix changes with any run.

`view`, for a chart of a few arms (a forest, a sweep): what needs every arm of a row is left
out. There is no Holm correction, no family and no detectable effect (no such chart reads
them), and which arm a cell repeats is decided among the arms handed in alone. A forest, handed
its arm and the baseline, so marks only an arm that repeats the baseline (`≡ baseline`, the same
mark as the matrix's: the baseline is the matrix's first column); that it repeats another
compared arm is the matrix's to say.

`rows_view`, for the charts of a system's rows: handed every cell of those rows, it builds each
row as the phase matrix does (`rows.row`), so the charts are the matrix's, and an arm added to
another system leaves them be.
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
    order = [baseline_arm] + [a for a in arms if a != baseline_arm]
    table = _table(paths, order)
    found = [rows.plain(d, s, docs, order, baseline_arm, (splits or {}).get(d))
             for (d, s), docs in sorted(table.items())]
    return _view(found, table, order, baseline_arm, paths, {})


def rows_view(paths: list[Path], baseline_arm: str, arms: list[str], splits: dict[str, str] | None = None,
              archetypes: dict[str, str] | None = None, comparisons: list[str] | None = None,
              notes: dict[str, str] | None = None) -> View:
    """The statistics of whole rows, `paths` holding every cell of each (dataset, system) they
    touch, each row as the phase matrix has it (`crmatrix.analysis.matrix.assemble`). `arms`:
    the matrix's column order (the config's; the baseline put first, as the matrix does); the
    rest, the config's facts as the matrix is handed them."""
    order = [baseline_arm] + [a for a in arms if a != baseline_arm]
    table = _table(paths, order)
    notes = {d: n for d, n in sorted((notes or {}).items()) if n}
    return _view(rows.rows(table, order, baseline_arm, archetypes, splits, comparisons, notes), table, order,
                 baseline_arm, paths, notes)


def _table(paths: list[Path], order: list[str]) -> dict[tuple[str, str], dict[str, Cell]]:
    """(dataset, system) -> arm -> its cell, read from `paths`; a cell of an arm not in `order` is refused."""
    if not paths:
        raise CrmatrixError("plots: expected the statistics of at least one cell file, got none")
    table: dict[tuple[str, str], dict[str, Cell]] = {}
    for p in paths:
        doc = Cell.from_json(atomic.read_json(Path(p)), str(p))
        if doc.arm not in order:
            raise CrmatrixError(f"{p}: a cell of arm {doc.arm!r}, expected one of {', '.join(order)}")
        table.setdefault((doc.dataset, doc.system), {})[doc.arm] = doc
    return table


def _view(found: list, table: dict, order: list[str], baseline_arm: str, paths: list[Path],
          notes: dict[str, str]) -> View:
    present = {a for docs in table.values() for a in docs}
    drawn = [a for a in order if a in present]
    return View(metric=METRIC, baseline_arm=baseline_arm, arms=tuple(drawn), rows=tuple(found),
                pooled=tuple(pooling.pooled(found, drawn, baseline_arm)), alpha=stats.ALPHA,
                source=f"the cells of arms {', '.join(drawn)} ({len(paths)} files, {paths[0]}, ...)", notes=notes)
