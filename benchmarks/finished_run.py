"""What the readers of a finished clean-clone run share (benchmarks/swe_qa.py, arena.py, ...): their
command line (`parser`) and output (`emit`: printed, written only when asked),
the run's wall time from its Snakemake log (the clone's commit: `timing.commit`), and every
Snakemake command the clone's logs record, with whether the run was cold (`invocations`,
`history`, and the report's opening lines: `run_lines`)."""

from __future__ import annotations

import argparse
import datetime
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import timing
from clocks import STAMP, log_time


def wall_time(clone: Path) -> tuple[float, int]:
    """Seconds from the first to the last time stamp of the clone's first Snakemake log (the
    run; the second is `make run`'s report), and the jobs it finished."""
    log = min((clone / ".snakemake" / "log").glob("*.snakemake.log"), key=lambda p: p.stat().st_mtime).read_text()
    stamps = [log_time(s) for s in STAMP.findall(log)]
    return (stamps[-1] - stamps[0]).total_seconds(), log.count("Finished jobid:")


@dataclass(frozen=True)
class Invocation:
    """One Snakemake command of a clone, from its log: the log's name (its start time), the jobs
    it planned and finished (the `all` target aside), and its wall seconds: from the log's
    `Date:` header (Snakemake 9 writes it as the command starts, before planning; else its first
    time stamp) to its last time stamp."""
    log: str
    planned: int
    finished: int
    wall: float


def invocations(clone: Path) -> list[Invocation]:
    """Every Snakemake command whose log is in CLONE/.snakemake/log, in the order they started."""
    logs = sorted((clone / ".snakemake" / "log").glob("*.snakemake.log"))  # named by their start
    if not logs:
        sys.exit(f"{clone}/.snakemake/log: no Snakemake log, so no finished run to read")
    out = []
    for path in logs:
        log = path.read_text()
        stamps = [log_time(s) for s in STAMP.findall(log)]
        date = re.search(r"^\s*Date: (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)$", log, re.M)
        start = datetime.datetime.fromisoformat(date.group(1)) if date else stamps[0] if stamps else None
        finished = [line for line in log.splitlines() if line.startswith("Finished jobid:")]
        out.append(Invocation(log=path.name, planned=sum(timing.jobs_per_rule(log).values()),
                              finished=sum("(Rule: all)" not in line for line in finished),
                              wall=(stamps[-1] - start).total_seconds() if stamps and start else 0.0))
    return out


@dataclass(frozen=True)
class History:
    """What a clone's results come from: the Snakemake commands that ran jobs there, their wall
    seconds and jobs summed, and whether they were one cold run (`cold`: one command alone ran
    jobs, and every one it planned; with `results/` and its caches made by the clone's runs, an
    earlier one would have left a log that ran jobs)."""
    worked: tuple[Invocation, ...]
    wall: float
    jobs: int
    cold: bool


def history(clone: Path) -> History:
    """The clone's Snakemake commands that ran jobs; one clear error when none did."""
    worked = tuple(i for i in invocations(clone) if i.finished)
    if not worked:
        sys.exit(f"{clone}/.snakemake/log: no Snakemake command there finished a job, so no run to read")
    return History(worked=worked, wall=sum(i.wall for i in worked), jobs=sum(i.finished for i in worked),
                   cold=len(worked) == 1 and worked[0].finished == worked[0].planned)


def run_lines(clone: Path, note: str, title: str, config: str) -> list[str]:
    """What a report says of the run it read: its title, the clone's commit, whether the run of
    `config` was cold (its Snakemake logs: `history`), its wall time and jobs."""
    hist = history(clone)
    if hist.cold:
        how = (f"cold: the one Snakemake command of the clone that ran jobs, every one it planned "
               f"(`{hist.worked[0].log}`; `results/` and its caches were empty before it)")
    else:
        how = (f"**not cold**: {len(hist.worked)} Snakemake commands of the clone ran jobs (" +
               ", ".join(f"`{i.log}`: {i.finished} of {i.planned} planned" for i in hist.worked) +
               "), so the later ones found the earlier ones' results and caches; times and cache shares are "
               "not a cold run's")
    return [f"# {title}, from a clean clone — {datetime.date.today().isoformat()}", "",
            f"`make run CONFIG={config}` in a clean clone of crmatrix at {timing.commit(clone)}, "
            f"{how}. {note}".rstrip(), "",
            f"Snakemake wall time of the run: **{hist.wall / 60:.1f} min** for {hist.jobs} jobs (from each log's "
            "start to its last time stamp, summed over the commands that ran jobs; `make run`'s venv install and "
            "report come on top).", ""]


def parser(script: str, doc: str, name: str) -> argparse.ArgumentParser:
    """`benchmarks/SCRIPT CLONE [--note TEXT] [--out FILE | --write]`, `doc` its help: a reader that
    prints its report and writes it only when asked (`emit`; NAME: its file under benchmarks/results)."""
    p = argparse.ArgumentParser(prog=f"benchmarks/{script}", description=doc,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("clone", type=Path, help="the clean clone holding the finished run")
    p.add_argument("--note", default="", help="a line about the machine for the reader")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--out", type=Path, help="write the report to this file too")
    where.add_argument("--write", action="store_true",
                       help=f"write it to benchmarks/results/{name}-<date>-clean.md too (a tracked file)")
    return p


def emit(lines: list[str], out: Path | None, tracked: bool, name: str) -> None:
    """Print the report; write it to `out`, or with `tracked` to benchmarks/results/NAME-<date>-clean.md."""
    print("\n".join(lines))
    dest = out or (result_path(name) if tracked else None)
    if dest is not None:
        dest.write_text("\n".join(lines) + "\n")
        print(f"wrote {dest}")


def result_path(name: str) -> Path:
    """benchmarks/results/NAME-<date>-clean.md (-2, -3... when taken, `timing.new_result`): where a
    reader's figures are kept, when asked."""
    return timing.new_result(f"{name}-{datetime.date.today().isoformat()}-clean")
