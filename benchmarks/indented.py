"""The indented JSON writer against the standard library's, run by hand (not in CI):

    .venv/bin/python benchmarks/indented.py CLONE [--repeats N] [--note TEXT] [--out FILE | --write]

CLONE holds a finished matrix (read only). For its phase matrix, its largest run and its largest
call graph (what collect_matrix, evaluate_arm and extract_graph write), the file parsed and written
by `json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False)` (what `atomic.write_json`
wrote before) and by `crmatrix.indented.dumps` (what it writes now), in turns: whether the two
texts are the same (they must be), and each's least CPU seconds over N rounds, with the load
before and after. `--write` keeps it in benchmarks/results/indented-<date>-clean.md.
"""

from __future__ import annotations

import json
import time

import finished_run
from timing import TODAY, uptime

from crmatrix import indented


def stdlib(obj) -> str:
    return json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False)


def in_turns(obj, repeats: int) -> tuple[float, float]:
    """The least CPU seconds of each writer over `repeats` rounds, the two in turns."""
    best = {stdlib: float("inf"), indented.dumps: float("inf")}
    for _ in range(repeats):
        for write in best:
            start = time.process_time()
            write(obj)
            best[write] = min(best[write], time.process_time() - start)
    return best[stdlib], best[indented.dumps]


def main() -> None:
    p = finished_run.parser("indented.py", __doc__, "indented")
    p.add_argument("--repeats", type=int, default=5, help="rounds per writer (default 5)")
    args = p.parse_args()
    results = args.clone.resolve() / "results"
    largest = {
        "the phase matrix": results / "matrix" / "phase-matrix.json",
        "the largest run": max((results / "runs").glob("*/*/*.json"), key=lambda f: f.stat().st_size),
        "the largest call graph": max((results / "graph").glob("*.json"), key=lambda f: f.stat().st_size),
    }
    lines = [f"# The indented JSON writer against the standard library's — {TODAY}", "",
             f"{args.note + ' ' if args.note else ''}Files of the finished matrix in {args.clone.name}; each "
             f"parsed, then written by each writer in turns, least CPU seconds of {args.repeats} rounds. "
             f"Load before: {uptime()}.", "",
             "| file | MB | same text | json.dumps s | crmatrix.indented s | ratio |", "|---|---:|---|---:|---:|---:|"]
    for what, path in largest.items():
        obj = json.loads(path.read_text(encoding="utf-8"))
        same = stdlib(obj) == indented.dumps(obj)
        old, new = in_turns(obj, args.repeats)
        lines.append(f"| {what} ({path.relative_to(results)}) | {path.stat().st_size / 1e6:.1f} | "
                     f"{'yes' if same else 'NO'} | {old:.3f} | {new:.3f} | {new / old:.2f}x |")
    lines += ["", f"Load after: {uptime()}."]
    finished_run.emit(lines, args.out, args.write, "indented")


if __name__ == "__main__":
    main()
