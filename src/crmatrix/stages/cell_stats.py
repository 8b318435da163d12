"""cell_stats: one cell of the phase matrix, an arm's run against the baseline's run of the same
dataset and system (none for the baseline's own cell), as the statistics collect_matrix assembles."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from crmatrix import atomic
from crmatrix.analysis import cells
from crmatrix.datasets import ledger
from crmatrix.results.cell import Cell, FormatFacts
from crmatrix.results.run import Run
from crmatrix.results.times import RunTimes


def run(run_path: Path, base_path: Path | None, headline_method: str, fmt: dict | None, out: Path,
        times: Path | None = None) -> Cell:
    """`fmt`: the facts of the dataset's format (crmatrix.config.plan.Plan.matrix_format; a
    public benchmark's cell holds its metrics). The cell carries
    its run's test-split scoring (crmatrix.datasets.ledger), which collect_matrix records.
    `times`: where the run's times go (`crmatrix.results.times`, for the latency charts)."""
    run = Run.read(Path(run_path))
    if times is not None:
        RunTimes.of(run).write(Path(times))
    base = None if base_path is None else Run.read(Path(base_path))
    facts = None if fmt is None else FormatFacts.from_json(fmt, "the dataset's format")
    cell = replace(cells.cell(run, base, headline_method, facts),
                   test_scoring=ledger.scoring(run, atomic.sha256_file(Path(run_path))))
    cell.write(Path(out))
    return cell
