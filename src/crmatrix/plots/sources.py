"""What the charts draw from: a `View` of the statistics of the matrix's cells, in the phase
matrix's shape (`crmatrix.results.matrix.PhaseMatrix`): `metric`, `baseline_arm`, `arms` (column
order), `rows` (one per dataset and system: each arm's cell and the per-query decomposition
against the baseline), `pooled` (per system and arm), `alpha` and the datasets' `notes`.

A chart job is handed the files that hold what it draws, so a chart does not care which files
they are: a chart of every arm is fed `results/matrix/phase-matrix.json` (which changes with
any run) and reads it here; a chart of a few arms is fed their cells, read into the same shape
by `crmatrix.plots.cellview`. The look-ups below serve both.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from crmatrix import CrmatrixError
from crmatrix.results.matrix import PhaseMatrix
from crmatrix.results.pool import PoolEntry
from crmatrix.results.row import PlainRow


@dataclass(frozen=True)
class View:
    metric: str
    baseline_arm: str
    arms: tuple[str, ...]
    rows: tuple[PlainRow, ...]
    pooled: tuple[PoolEntry, ...]
    alpha: float  # the level a corrected p is significant at
    source: str  # what was read, for an error
    notes: dict[str, str] = field(default_factory=dict)  # a dataset's caveat, shown beside its name


def view(paths: list[Path]) -> View:
    """The statistics in `paths` (one phase matrix) as the charts read them."""
    if len(paths) != 1:
        raise CrmatrixError(f"plots: expected the statistics in one phase matrix file, got {len(paths)} files: "
                            f"{', '.join(map(str, paths)) or 'none'}")
    return of_matrix(PhaseMatrix.read(Path(paths[0])), str(paths[0]))


def of_matrix(m: PhaseMatrix, source: str) -> View:
    """The phase matrix `m` as the charts read it; `source`: where it was read."""
    return View(metric=m.metric, baseline_arm=m.baseline_arm, arms=m.arms, rows=m.rows, pooled=m.pooled,
                alpha=m.statistics.alpha, source=source, notes=m.notes)


def row(v: View, dataset: str, system: str) -> PlainRow:
    """The row of `dataset` on `system`."""
    found = [r for r in v.rows if (r.dataset, r.system) == (dataset, system)]
    if not found:
        raise CrmatrixError(f"{v.source}: no row of dataset {dataset!r} on system {system!r}")
    return found[0]


def rows(v: View, system: str) -> list[PlainRow]:
    """The rows of `system` (at least one), in the matrix's order (by dataset)."""
    found = [r for r in v.rows if r.system == system]
    if not found:
        raise CrmatrixError(f"{v.source}: no row of system {system!r}")
    return found


def pool(v: View, system: str, arm: str) -> PoolEntry:
    """The random-effects pool of `arm` against the baseline on `system`'s datasets."""
    found = [e for e in v.pooled if (e.system, e.arm) == (system, arm)]
    if not found:
        raise CrmatrixError(f"{v.source}: no pooled entry of arm {arm!r} on system {system!r} (an arm needs a "
                            "dataset where both it and the baseline ran)")
    return found[0]
