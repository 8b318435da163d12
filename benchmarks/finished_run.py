"""What the readers of a finished clean-clone run share (benchmarks/swe_qa.py, arena.py): their
command line and the run's wall time from its Snakemake log (the clone's commit: `timing.commit`)."""

from __future__ import annotations

import datetime
import sys
from pathlib import Path

from clocks import STAMP, log_time


def option(flag: str, default: str) -> str:
    """`flag VALUE` taken off the command line (`default` when absent), before `arguments`
    reads the rest."""
    if flag not in sys.argv:
        return default
    at = sys.argv.index(flag)
    if at + 1 == len(sys.argv):
        sys.exit(f"{flag}: expected a value after it")
    value = sys.argv[at + 1]
    del sys.argv[at:at + 2]
    return value


def arguments(script: str) -> tuple[Path, str]:
    """`script CLONE [--note TEXT]`: the clone, and a line about the machine for the reader."""
    note = option("--note", "")
    if len(sys.argv) != 2:
        sys.exit(f"usage: benchmarks/{script} CLONE [--note TEXT]")
    return Path(sys.argv[1]).resolve(), note


def wall_time(clone: Path) -> tuple[float, int]:
    """Seconds from the first to the last time stamp of the clone's first Snakemake log (the
    run; the second is `make run`'s report), and the jobs it finished."""
    log = min((clone / ".snakemake" / "log").glob("*.snakemake.log"), key=lambda p: p.stat().st_mtime).read_text()
    stamps = [log_time(s) for s in STAMP.findall(log)]
    return (stamps[-1] - stamps[0]).total_seconds(), log.count("Finished jobid:")


def write(name: str, lines: list[str]) -> None:
    """Print the figures and write them to benchmarks/results/NAME-<date>-clean.md."""
    dest = Path(__file__).resolve().parent / "results" / f"{name}-{datetime.date.today().isoformat()}-clean.md"
    dest.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(f"wrote {dest}")
