"""collect_matrix: every run of the matrix aggregated into the phase matrix (JSON and Markdown)."""

from __future__ import annotations

from pathlib import Path

from crmatrix import atomic, matrix


def run(runs: list[Path], baseline_arm: str, headline_method: str, arm_order: list[str],
        archetypes: dict[str, str], json_out: Path, md_out: Path, splits: dict[str, str] | None = None,
        comparisons: list[str] | None = None, formats: dict[str, str] | None = None,
        summaries: dict[str, Path] | None = None) -> dict:
    """`summaries`: dataset -> its dataset stage's summary file (dropped rows by reason)."""
    m = matrix.build([atomic.read_json(p) for p in runs], baseline_arm, headline_method, arm_order, archetypes,
                     splits, comparisons, formats, {d: atomic.read_json(p) for d, p in (summaries or {}).items()})
    matrix.write(m, Path(json_out), Path(md_out))
    return m
