"""Snakemake's own CPU while it runs many short jobs, by its scheduler's subsample, run by hand
(not in CI): `.venv/bin/python benchmarks/scheduling.py WS [CONFIG]`.

WS is a finished workspace of CONFIG (config/seed-matrix.yaml by default; e.g. the one
`pipeline.py seed --keep` leaves). Its `cell_stats` jobs (720 in the seed matrix) are run again
(`--forcerun cell_stats --until cell_stats`), once per `--scheduler-subsample` value in turns,
REPEATS rounds: each finished job starts a scheduling round, and each round Snakemake stats every
input of every ready job it weighs, so its own CPU grows with the ready jobs a round weighs.
Printed per value: wall seconds, the CPU seconds of Snakemake's own process and of its jobs
(getrusage in the process that runs Snakemake: itself, and its waited-for children), the
fastest round's; written to benchmarks/results/scheduling-<date>.md. The cells rewritten are
checked byte for byte against the first round's.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

from timing import BIN, CORES, REPEATS, ROOT, TODAY, commit, out_lines, say, uptime

# The process that runs Snakemake reports its own CPU and its children's when Snakemake exits.
RUN = """
import atexit, resource, runpy, sys, time
start = time.perf_counter()
out = sys.argv.pop(1)
def report():
    own, jobs = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(out, "w") as f:
        f.write(f"{time.perf_counter() - start} {own.ru_utime + own.ru_stime} {jobs.ru_utime + jobs.ru_stime}")
atexit.register(report)
sys.argv[0] = "snakemake"
runpy.run_path(sys.argv.pop(1), run_name="__main__")
"""
SUBSAMPLES = (0, 16)  # 0: every ready job weighed (Snakemake's default)


def cells_digest(ws: Path) -> str:
    digest = hashlib.sha256()
    for cell in sorted((ws / "results" / "cells").rglob("*.json")):
        digest.update(str(cell.relative_to(ws)).encode() + b"\0" + cell.read_bytes())
    return digest.hexdigest()


def rerun(ws: Path, config: str, subsample: int) -> tuple[float, float, float]:
    """Wall, Snakemake's own CPU and its jobs' CPU seconds of one rerun of the cell_stats jobs."""
    clock = ws / "scheduling-clock.txt"
    env = {**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "PYTHONPATH": str(ws / "src")}
    subprocess.run([sys.executable, "-c", RUN, str(clock), str(BIN / "snakemake"), "--profile", "profiles/local",
                    "--cores", str(CORES), "--scheduler-subsample", str(subsample), "--forcerun", "cell_stats",
                    "--until", "cell_stats", "all", "--configfile", config],
                   cwd=ws, env=env, check=True, capture_output=True, timeout=3600)
    wall, own, jobs = (float(x) for x in clock.read_text().split())
    clock.unlink()
    return wall, own, jobs


def main() -> None:
    ws = Path(sys.argv[1]).resolve()
    config = sys.argv[2] if len(sys.argv) > 2 else "config/seed-matrix.yaml"
    say(f"# Snakemake's own CPU by its scheduler's subsample — {TODAY}")
    say("")
    say(f"crmatrix at {commit()} (this checkout: the benchmark); the workspace {ws.name} runs its own "
        f"code ({config}). {CORES} cores. Load at the start: `{uptime()}`.")
    say("")
    times: dict[int, list[tuple[float, float, float]]] = {s: [] for s in SUBSAMPLES}
    digests = set()
    for _ in range(REPEATS):
        for subsample in SUBSAMPLES:  # in turns: each value meets the same load
            times[subsample].append(rerun(ws, config, subsample))
            digests.add(cells_digest(ws))
    say(f"Its cell_stats jobs ({len(list((ws / 'results' / 'cells').rglob('*.json')))} cells) run again, "
        f"`--forcerun cell_stats --until cell_stats`, {REPEATS} rounds, the fastest (by wall) shown:")
    say("")
    say("| --scheduler-subsample | wall s | Snakemake's own CPU s | its jobs' CPU s |")
    say("|---|---:|---:|---:|")
    for subsample, runs in times.items():
        wall, own, jobs = min(runs)
        say(f"| {subsample or 'none (every ready job)'} | {wall:.1f} | {own:.1f} | {jobs:.1f} |")
    say("")
    say(f"The cells rewritten: {'byte-identical in every round' if len(digests) == 1 else 'NOT identical'}.")
    say(f"Load at the end: `{uptime()}`.")
    dest = ROOT / "benchmarks" / "results" / f"scheduling-{TODAY}.md"
    dest.write_text("\n".join(out_lines) + "\n")
    print(f"wrote {dest}")


if __name__ == "__main__":
    main()
