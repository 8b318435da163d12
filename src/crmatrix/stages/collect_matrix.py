"""collect_matrix: every cell's statistics (stages.cell_stats) assembled into the phase matrix (JSON
and Markdown), and each test-split run recorded in the test-split ledger (crmatrix.datasets.ledger)
once both are written."""

from __future__ import annotations

from pathlib import Path

from crmatrix import atomic
from crmatrix.analysis.matrix import assemble as matrix
from crmatrix.datasets import ledger
from crmatrix.results.cell import Cell
from crmatrix.results.matrix import PhaseMatrix


def run(cells: list[Path], baseline_arm: str, headline_method: str, arm_order: list[str], archetypes: dict[str, str],
        json_out: Path, md_out: Path, splits: dict[str, str] | None = None, comparisons: list[str] | None = None,
        ledger_path: Path = ledger.PATH, summaries: dict[str, Path] | None = None,
        notes: dict[str, str] | None = None, reference: str | None = None,
        pooled_as: dict[str, str] | None = None) -> PhaseMatrix:
    """`summaries`: dataset -> its dataset stage's summary file (dropped rows by reason);
    `notes`: dataset -> its caveat (config `note`), shown beside its name; `reference`: the
    system the leaderboard compares the others with (config `reference_system`); `pooled_as`:
    dataset -> the benchmark it is a split of (pooled in the matrix too)."""
    loaded = [Cell.read(Path(p)) for p in cells]
    scorings = [c.test_scoring for c in loaded if c.test_scoring is not None]
    book = ledger.read(ledger_path)
    changed = ledger.add(book, scorings)  # the matrix shows the counts with these runs in them
    m = matrix.assemble(loaded, baseline_arm, headline_method, arm_order, archetypes, splits, comparisons,
                        test_ledger=ledger.entries(book, scorings),
                        summaries={d: atomic.read_json(Path(p)) for d, p in (summaries or {}).items()},
                        notes=notes, reference=reference, pooled_as=pooled_as)
    matrix.write(m, Path(json_out), Path(md_out))
    if changed:  # last: a job killed before this point has counted nothing, and re-runs
        ledger.write(book, ledger_path)
    return m
