"""What the readers of a finished run comparing systems share (benchmarks/arena.py,
swe_bench_tools.py): the phase matrix its run's matrix job wrote (`matrix`: its leaderboard, its
public benchmarks), the baseline arm's runs (`baseline_runs`), what each system's queries came to
(`outcomes`: answered, empty, unresolved, failed, as the leaderboard counts them), each system's
job seconds per stage from Snakemake's benchmark files (`job_seconds`), and the leaderboard's
table (`board_lines`). The figures are the matrix's: nothing here computes a statistic again."""

from __future__ import annotations

import csv
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

from crmatrix.hits import FILE, SYMBOL
from crmatrix.results.leaderboard import Leaderboard, Standing
from crmatrix.results.matrix import PhaseMatrix
from crmatrix.results.run import Run, outcome

MATRIX = Path("results") / "matrix" / "phase-matrix.json"
# Each stage's rules, whose jobs' seconds a system is charged (the path of a job's benchmark file
# names its system): a tool's index of one tree or of a repository's trees, the builtin's indexes.
STAGES = {"install": ("install_system",),
          "index": ("build_system_index", "build_system_index_commits", "build_index", "build_repository_index"),
          "evaluation": ("evaluate_arm",)}


def matrix(clone: Path) -> PhaseMatrix:
    """The clone's phase matrix, with its leaderboard; one line naming the file when it has none."""
    path = clone / MATRIX
    if not path.is_file():
        sys.exit(f"{path}: no phase matrix, so no finished run to read")
    m = PhaseMatrix.read(path)
    if m.leaderboard is None:
        sys.exit(f"{path}: no leaderboard (it needs two systems or more, the reference among them)")
    return m


def baseline_runs(clone: Path, arm: str) -> list[Run]:
    """The runs of the baseline arm, by dataset then system."""
    return [Run.read(p) for p in sorted((clone / "results" / "runs").glob(f"*/*/{arm}.json"))]


def outcomes(runs: Iterable[Run], method: str) -> dict[str, int]:
    """The queries of `method` over `runs`, and how many named nothing (`empty`), nothing of the
    corpus (`unresolved`) or failed: each query's outcome, as the leaderboard counts its own."""
    rows = [q for r in runs if method in r.methods for q in r.methods[method].queries]
    told = [outcome(q) for q in rows]
    return {"queries": len(rows), **{o: told.count(o) for o in ("empty", "unresolved", "failed")}}


def rule_seconds(clone: Path, rule: str) -> dict[str, float]:
    """Job seconds of a rule's jobs per system (the benchmark file's path names the system)."""
    out: dict[str, float] = {}
    for tsv in sorted((clone / "logs" / "benchmarks" / rule).rglob("*.tsv")):
        parts = tsv.relative_to(clone / "logs" / "benchmarks" / rule).parts
        system = parts[0] if rule == "install_system" else parts[1]
        with tsv.open() as f:
            out[system] = out.get(system, 0.0) + sum(float(row["s"]) for row in csv.DictReader(f, delimiter="\t"))
    return out


def job_seconds(clone: Path) -> dict[str, dict[str, float]]:
    """Stage (STAGES) -> system -> the seconds of its jobs of that stage's rules."""
    out: dict[str, dict[str, float]] = {}
    for stage, rules in STAGES.items():
        out[stage] = {}
        for rule in rules:
            for system, secs in rule_seconds(clone, rule).items():
                out[stage][system] = out[stage].get(system, 0.0) + secs
    return out


def level_line(board: Leaderboard) -> str:
    """The level the leaderboard ranks at (crmatrix.results.leaderboard.Leaderboard.level), in words."""
    if board.level == FILE:
        return ("The leaderboard ranks at the **file** level: a system answers whole files, so every system's hits "
                "are ranked as files.")
    if board.level == SYMBOL:
        return ("The leaderboard ranks at the **symbol** level (no system answers whole files): each query is "
                "scored at its gold's level, which for a file gold (SWE-bench's, SWE-QA's) is files.")
    return "The leaderboard does not say its level (a matrix from before levels were told apart)."


def _delta(s: Standing, reference: str) -> str:
    if s.system == reference:
        return "reference"
    if s.pooled is None:
        return "—" if s.delta is None else f"{s.delta:+.3f}"
    return f"{s.pooled.estimate:+.3f} [{s.pooled.ci_low:+.3f}, {s.pooled.ci_high:+.3f}]"


def board_lines(board: Leaderboard, seconds: dict[str, dict[str, float]], extra: tuple[str, ...] = (),
                cells: Callable[[Standing], list[str]] = lambda s: []) -> list[str]:
    """The leaderboard as a table: per standing its rank, headline method, datasets, queries,
    macro MRR at the board's level, pooled Δ against the reference, failed, empty and
    unresolved answers, search latency, `extra` columns (`cells` gives a standing's), and its
    install, index and evaluation job seconds (—: none)."""
    head = ["rank", "system", "method", "datasets", "queries", f"macro MRR ({board.level or '?'})",
            f"pooled Δ MRR against {board.reference} [95 % CI]", "failed", "empty", "unresolved", "p50 ms",
            "p95 ms", *extra, *(f"{stage} s" for stage in STAGES)]
    lines = ["| " + " | ".join(head) + " |", "|---:|---|---|" + "---:|" * 3 + "---|" + "---:|" * (len(head) - 7)]
    for s in board.standings:
        own = [str(s.rank), s.system, s.method, str(s.datasets), str(s.queries), f"{s.mean:.3f}",
               _delta(s, board.reference), str(s.failed), str(s.empty), str(s.unresolved),
               f"{s.latency_ms['p50']:.1f}", f"{s.latency_ms['p95']:.1f}", *cells(s),
               *("—" if s.system not in seconds[stage] else f"{seconds[stage][s.system]:.0f}" for stage in STAGES)]
        lines.append("| " + " | ".join(own) + " |")
    return lines
