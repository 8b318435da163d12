"""What the charts draw from: the statistics of the matrix's cells, in the phase matrix's shape
(`crmatrix.analysis.matrix.build`): `metric`, `baseline_arm`, `arms` (column order), `rows`
(one per dataset and system: each arm's cell and the per-query decomposition against the
baseline), `pooled` (per system and arm) and `statistics` (alpha and the like).

A chart job is handed the files that hold what it draws and reads them here, so a chart does
not care which files they are. Today each is fed `results/matrix/phase-matrix.json` (which
changes with any run); files of narrower statistics, read into the same shape here, narrow a
chart's inputs without touching the chart.
"""

from __future__ import annotations

from pathlib import Path

from crmatrix import CrmatrixError, atomic

KEYS = ("metric", "baseline_arm", "arms", "rows", "pooled", "statistics")


def view(paths: list[Path]) -> dict:
    """The statistics in `paths` (one phase matrix) as the charts read them."""
    if len(paths) != 1:
        raise CrmatrixError(f"plots: expected the statistics in one phase matrix file, got {len(paths)} files: "
                            f"{', '.join(map(str, paths)) or 'none'}")
    m = atomic.read_json(Path(paths[0]))
    missing = [k for k in KEYS if not isinstance(m, dict) or k not in m]
    if missing:
        raise CrmatrixError(f"{paths[0]}: not a phase matrix (no {', '.join(missing)})")
    return {**m, "source": str(paths[0])}


def row(v: dict, dataset: str, system: str) -> dict:
    """The row of `dataset` on `system`."""
    found = [r for r in v["rows"] if (r["dataset"], r["system"]) == (dataset, system)]
    if not found:
        raise CrmatrixError(f"{v['source']}: no row of dataset {dataset!r} on system {system!r}")
    return found[0]


def rows(v: dict, system: str) -> list[dict]:
    """The rows of `system` (at least one), in the matrix's order (by dataset)."""
    found = [r for r in v["rows"] if r["system"] == system]
    if not found:
        raise CrmatrixError(f"{v['source']}: no row of system {system!r}")
    return found


def pool(v: dict, system: str, arm: str) -> dict:
    """The random-effects pool of `arm` against the baseline on `system`'s datasets."""
    found = [e for e in v["pooled"] if (e["system"], e["arm"]) == (system, arm)]
    if not found:
        raise CrmatrixError(f"{v['source']}: no pooled entry of arm {arm!r} on system {system!r} (an arm needs a "
                            "dataset where both it and the baseline ran)")
    return found[0]
