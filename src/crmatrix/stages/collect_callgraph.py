"""collect_callgraph: every call-graph evaluation in one table (JSON and Markdown)."""

from __future__ import annotations

from pathlib import Path

from crmatrix import atomic
from crmatrix.evaluation import callgraph


def run(runs: list[Path], json_out: Path, md_out: Path) -> None:
    callgraph.write_report([atomic.read_json(p) for p in runs], Path(json_out), Path(md_out))
