"""cell_stats: one cell of the phase matrix, an arm's run against the baseline's run of the same
dataset and system (none for the baseline's own cell), as the statistics collect_matrix assembles."""

from __future__ import annotations

from pathlib import Path

from crmatrix import atomic
from crmatrix.analysis import cells
from crmatrix.datasets import ledger


def run(run_path: Path, base_path: Path | None, headline_method: str, fmt: dict | None, out: Path) -> dict:
    """`fmt`: the facts of the dataset's format (crmatrix.config.plan.Plan.matrix_format; a
    public benchmark's cell holds its metrics). The cell carries
    its run's test-split scoring (crmatrix.datasets.ledger), which collect_matrix records."""
    run_json = atomic.read_json(Path(run_path))
    base = None if base_path is None else atomic.read_json(Path(base_path))
    cell = cells.cell(run_json, base, headline_method, fmt)
    cell["test_scoring"] = ledger.scoring(run_json, atomic.sha256_file(Path(run_path)))
    atomic.write_json(Path(out), cell)
    return cell
