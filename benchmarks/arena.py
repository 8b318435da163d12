"""The arena's figures (issue 19), run by hand (not in CI):

    make run CONFIG=config/arena.yaml              # in a clean clone, cold
    .venv/bin/python benchmarks/arena.py CLONE [--note TEXT] [--out FILE | --write]

reads the finished run in CLONE and prints its report; `--out FILE` writes it to FILE too,
`--write` to benchmarks/results/arena-<date>-clean.md (a tracked file). The report: whether the
run was cold and its wall time (the clone's Snakemake logs); per system, in the order of the phase matrix's leaderboard
(results/matrix/phase-matrix.json: the baseline arm's runs, each system's headline method), the
level it ranks at, its datasets, queries, macro MRR at that level, pooled Δ against the
reference system, failed queries beside the answers naming nothing (empty) or nothing of the
corpus (unresolved), search latency p50/p95, its file-level MRR, Acc@1 and Acc@5 (each run's
own, averaged over its datasets as the macro MRR is), and each tool's install, index and
evaluation job seconds; then each dataset's MRR per system. `--note`: a line about the machine
(its load).
"""

from __future__ import annotations

import compared
import finished_run

from crmatrix.hits import FILE
from crmatrix.results.leaderboard import Standing
from crmatrix.results.matrix import PhaseMatrix
from crmatrix.results.run import Run

CONFIG = "config/arena.yaml"
FILE_METRICS = ("mrr", "acc@1", "acc@5")  # each run's `file_metrics`, named as the run names them


def file_cells(runs: list[Run], s: Standing) -> list[str]:
    """The standing's headline method's file-level FILE_METRICS, each run's own averaged over the
    system's datasets (—: a run made before runs recorded them)."""
    tables = [r.methods[s.method].file_metrics for r in runs if r.system == s.system]
    if not tables or any(t is None for t in tables):
        return ["—"] * len(FILE_METRICS)
    return [f"{sum(t[m] for t in tables) / len(tables):.3f}" for m in FILE_METRICS]


def dataset_lines(m: PhaseMatrix) -> list[str]:
    """Each dataset's MRR per system at the leaderboard's level, from the matrix's rows (the
    baseline arm's cells: at file level, a gold finer than files scores its file level)."""
    systems = [s.system for s in m.leaderboard.standings]
    cells = {(r.dataset, r.system): r.cells[m.baseline_arm] for r in m.rows
             if r.system in systems and m.baseline_arm in r.cells}
    lines = ["## Per dataset (MRR at the leaderboard's level; failed queries in brackets)", "",
             "| dataset | " + " | ".join(systems) + " |", "|---|" + "---:|" * len(systems)]
    for d in sorted({d for d, _ in cells}):
        row = []
        for system in systems:
            c = cells.get((d, system))
            if c is None:
                row.append("—")
                continue
            mean = c.file_level.mean if m.leaderboard.level == FILE and c.file_level is not None else c.mean
            row.append(f"{mean:.3f}" + (f" ({c.failed})" if c.failed else ""))
        lines.append(f"| {d} | " + " | ".join(row) + " |")
    return lines


def main() -> None:
    args = finished_run.parser("arena.py", __doc__, "arena").parse_args()
    clone = args.clone.resolve()
    m = compared.matrix(clone)
    board = m.leaderboard
    runs = compared.baseline_runs(clone, m.baseline_arm)
    lines = [*finished_run.run_lines(clone, args.note, "The arena", CONFIG),
             f"{len({r.dataset for r in m.rows})} datasets, {len(board.standings)} systems, arm `{m.baseline_arm}`; "
             "every tool installed from PyPI by the workflow.", "",
             "## Per system, in leaderboard order", "", compared.level_line(board), "",
             "The leaderboard's figures (results/matrix/phase-matrix.json): the macro MRR of the headline method at "
             f"that level; pooled Δ against `{board.reference}` on the queries both answered (random effects over "
             "the datasets); failed queries, and answers naming nothing (empty) or nothing of the corpus "
             "(unresolved); latency: the search call per query (a CLI tool's includes its process start). File "
             "MRR, Acc@1 and Acc@5: each run's own at file level, averaged over the system's datasets. Job seconds "
             "summed over the system's jobs (—: none; the builtin's `bm25` and `lexical` build no index job, and "
             "it installs nothing).", "",
             *compared.board_lines(board, compared.job_seconds(clone), ("file MRR", "file Acc@1", "file Acc@5"),
                                   lambda s: file_cells(runs, s)), "", *dataset_lines(m)]
    finished_run.emit(lines, args.out, args.write, "arena")


if __name__ == "__main__":
    main()
