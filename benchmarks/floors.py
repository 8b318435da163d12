"""Snakemake's floors, against which a no-op rerun of a matrix is read: the one-rule floor (a
trivial Snakefile of as many finished jobs, `noop_and_floor`) and the fair floor of a DAG (a
trivial Snakefile of the same DAG: one job per real job, with as many inputs and outputs, each
input the output of the same producer, finished by `--touch`), plain and collecting as our
Snakefile does (`OUR_GC`); and a finished run's planning and no-op against them (`finished_dag`,
`dag_table`)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from timing import BIN, CORES, REPEATS, ROOT, in_turn, snakemake, verdict, workspace

TARGET_PLAN_S, TARGET_NOOP = 60.0, 1.3


def noop_and_floor(noop: Callable[[], float], jobs: int) -> tuple[float, float]:
    """The fastest of REPEATS no-op reruns of a finished matrix (`noop`: a timer of one) and of
    Snakemake's own floor, a trivial Snakefile of one rule with `jobs` finished jobs (each touching
    a file): Snakemake's own cost of checking that many jobs, against which the no-op is read. The
    two take turns (`in_turn`), so that both meet the same load: one run of each, a few seconds
    on a machine whose speed drifts, is a ratio at the mercy of when each ran."""
    trivial = workspace("trivial")
    (trivial / "Snakefile").write_text(
        f"rule all:\n    input: expand('out/{{i}}.txt', i=range({jobs}))\n\n\n"
        "rule one:\n    output: 'out/{i}.txt'\n    shell: 'touch {output}'\n")
    cmd = [str(BIN / "snakemake"), "--cores", str(CORES)]
    subprocess.run(cmd, cwd=trivial, capture_output=True, check=True, timeout=3600)  # its jobs, once

    def floor() -> float:
        t0 = time.perf_counter()
        subprocess.run(cmd, cwd=trivial, capture_output=True, check=True, timeout=3600)
        return time.perf_counter() - t0

    times = in_turn(noop=noop, floor=floor)
    return min(times["noop"]), min(times["floor"])


# -- the DAG as Snakemake plans it ------------------------------------------------------------

JOB_BLOCK = re.compile(r"^(?:local)?rule (\w+):\n((?:    .*\n)+)", re.M)


def planned_jobs(output: str) -> list[dict]:
    """Each job a dry run prints: its rule, input and output files (`all` included)."""
    jobs = []
    for m in JOB_BLOCK.finditer(output):
        fields = dict(line.strip().split(": ", 1) for line in m.group(2).splitlines() if ": " in line)
        jobs.append({"rule": m.group(1), "input": fields["input"].split(", ") if "input" in fields else [],
                     "output": fields["output"].split(", ") if "output" in fields else []})
    return jobs

def directory_outputs(ws: Path, jobs: list[dict]) -> set[tuple[str, int]]:
    """(rule, position) of each output a finished run made a directory (`directory()` in its rule)."""
    return {(j["rule"], k) for j in jobs for k, out in enumerate(j["output"]) if (ws / out).is_dir()}


# Every job touched (--forceall: an output that exists without a record is up to date to
# Snakemake, which would touch and record nothing). Its touch executor sleeps 0.1 s before each
# job's touch, so that its outputs come out newer than its inputs: 33 min of sleep over 20k jobs.
# Without it, touches in DAG order still leave no input newer than its consumer's outputs (at
# worst as new, which Snakemake does not count as newer), and the `-n` that follows confirms
# nothing is left to do.
TOUCH = [sys.executable, "-c", """
import sys
from snakemake.cli import main
from snakemake.executors import touch

touch.Executor.SLEEPING_TIME = 0
sys.argv[0] = "snakemake"
sys.exit(main())
""", "--touch", "--forceall"]


def finished(output: str, where: Path) -> None:
    """Stop unless a dry run's output says Snakemake has nothing to do."""
    if "Nothing to be done" not in output:
        sys.exit(f"{where} is not finished: `snakemake -n` plans\n{output[-3000:]}")



# -- the fair floor ------------------------------------------------------------------------------

FLOOR_SNAKEFILE = """
# Snakemake's floor for a DAG: one trivial job per job of it, with as many inputs and outputs.
import json

with open("floor.json") as f:
    FLOOR = json.load(f)

rule all:
    input: FLOOR["targets"]

for _n, _shape in enumerate(FLOOR["shapes"]):
    rule:
        name: f"shape{_n}"
        input: lambda wc: FLOOR["inputs"][int(wc.i)]
        output: [directory(f"o/{_n}/{{i}}.{k}") if d else f"o/{_n}/{{i}}.{k}" for k, d in enumerate(_shape)]
        wildcard_constraints: i=r"\\d+"
        shell: "touch {output}"
"""


# The floor's Snakefile taking our Snakefile's measures against the garbage collector.
OUR_GC = "the floor collecting as our Snakefile does (not while planning, then `gc.freeze()`)"


def floor_workspace(parent: Path, jobs: list[dict], dirs: set[tuple[str, int]]) -> tuple[Path, int]:
    """The fair floor of the DAG `jobs` in a new directory (and its number of jobs), every output
    of it created: job i of
    shape n (which of its outputs are directories) writes o/n/i.0, o/n/i.1, ...; an input no job
    writes is a file under src/."""
    where = Path(tempfile.mkdtemp(prefix="crmatrix-bench-floor-", dir=parent))
    shapes: list[tuple[bool, ...]] = []
    names: dict[str, str] = {}
    work = [j for j in jobs if j["rule"] != "all"]
    for i, j in enumerate(work):
        shape = tuple((j["rule"], k) in dirs for k in range(len(j["output"])))
        if shape not in shapes:
            shapes.append(shape)
        for k, (out, is_dir) in enumerate(zip(j["output"], shape, strict=True)):
            names[out] = f"o/{shapes.index(shape)}/{i}.{k}"
            (where / names[out]).parent.mkdir(parents=True, exist_ok=True)
            (where / names[out]).mkdir() if is_dir else (where / names[out]).touch()
    (where / "src").mkdir()
    for j in jobs:
        for f in j["input"]:
            if f not in names:
                names[f] = f"src/{len(names)}"
                (where / names[f]).touch()
    target = next(j for j in jobs if j["rule"] == "all")
    (where / "floor.json").write_text(json.dumps({
        "shapes": shapes, "targets": [names[f] for f in target["input"]],
        "inputs": [[names[f] for f in j["input"]] for j in work]}))
    (where / "Snakefile").write_text(FLOOR_SNAKEFILE)
    return where, len(work)

def floor_run(where: Path, *flags: str, launcher: list[str] | None = None) -> tuple[float, str]:
    """Seconds and output of the floor's Snakemake, with the matrix's profile."""
    t0 = time.perf_counter()
    proc = subprocess.run([*(launcher or [str(BIN / "snakemake")]), "--profile", str(ROOT / "profiles" / "local"),
                           "--cores", str(CORES), *flags], cwd=where, capture_output=True, text=True,
                          env={**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}"}, timeout=3 * 3600)
    secs = time.perf_counter() - t0
    if proc.returncode:
        sys.exit(f"the floor's snakemake {' '.join(flags)} failed in {where}:\n{proc.stderr[-3000:]}")
    return secs, proc.stdout + proc.stderr

def finished_floor(parent: Path, jobs: list[dict], dirs: set[tuple[str, int]]) -> dict:
    """The fair floor of the DAG finished by `--touch` (as the 5k and 20k matrices): where it
    is, its jobs, the seconds of its `--touch`."""
    where, count = floor_workspace(parent, jobs, dirs)
    touched, _ = floor_run(where, launcher=TOUCH)
    finished(floor_run(where, "-n")[1], where)
    return {"where": where, "jobs": count, "touch": touched}

def frozen_floor(floor: Path) -> Path:
    """A copy of a finished floor whose Snakefile collects garbage as ours does (`OUR_GC`: the
    Snakefile's comments): the floor of a Snakefile that takes the same measures. Its rules are
    unchanged, so it is finished too."""
    where = Path(tempfile.mkdtemp(prefix="crmatrix-bench-floor-frozen-", dir=floor.parent))
    shutil.copytree(floor, where, symlinks=True, dirs_exist_ok=True)
    text = (where / "Snakefile").read_text()
    (where / "Snakefile").write_text(f"import gc\n\ngc.disable()\n{text}\nonstart:\n    gc.enable()\n\n\ngc.freeze()\n")
    finished(floor_run(where, "-n")[1], where)
    return where

def against_floors(noop, floor: Path) -> dict[str, list[float]]:
    """`noop` (a timer) and the finished floor's no-op, plain and ending in `gc.freeze()`
    (`frozen_floor`), timed in turn; both floors are removed after."""
    frozen = frozen_floor(floor)
    try:
        return in_turn(noop=noop, floor=lambda: floor_run(floor)[0], frozen=lambda: floor_run(frozen)[0])
    finally:
        for where in (floor, frozen):
            shutil.rmtree(where, ignore_errors=True)


def finished_dag(ws: Path, config: str, rev: str) -> dict:
    """Planning, the no-op and its fair floor of a finished workspace `ws` of `config`: planning
    (`-n` with nothing done) in a fresh copy of revision `rev` beside it, the no-op in `ws`, and
    the floors of the same DAG (`finished_floor`), the no-op and the floors timed in turn."""
    plan_ws = workspace("plan", rev=rev)
    shutil.copy2(ws / config, plan_ws / config)  # the config as the run had it (one the benchmark wrote, too)
    snakemake(plan_ws, config, "-n")  # the first planning of a fresh copy compiles its modules
    plans = [snakemake(plan_ws, config, "-n", keep=True) for _ in range(REPEATS)]
    jobs = planned_jobs(plans[0][1][0])
    shutil.rmtree(plan_ws)
    finished(snakemake(ws, config, "-n", keep=True)[1][0], ws)
    floor = finished_floor(ws.parent, jobs, directory_outputs(ws, jobs))
    times = against_floors(lambda: snakemake(ws, config), floor["where"])
    return {"jobs": floor["jobs"], "plans": [s for s, _ in plans], "noops": times["noop"], "floors": times["floor"],
            "frozen": times["frozen"]}

def dag_table(shape: dict) -> list[str]:
    """`finished_dag`'s figures against the targets (planning <= 60 s, no-op <= 1.3x the fair floor)."""
    plan, noop, floor, frozen = (min(shape[k]) for k in ("plans", "noops", "floors", "frozen"))
    return ["", f"## The DAG: {shape['jobs']} jobs (`all` aside)", "",
            "| | fastest s | runs s | target |", "|---|---:|---|---|",
            f"| planning, nothing done | {plan:.1f} | {', '.join(f'{t:.1f}' for t in shape['plans'])} | "
            f"<= {TARGET_PLAN_S:.0f} s: {verdict(plan <= TARGET_PLAN_S)} |",
            f"| no-op, finished | {noop:.2f} | {', '.join(f'{t:.2f}' for t in shape['noops'])} | "
            f"<= {TARGET_NOOP}x the floor: {noop / floor:.2f}x, {verdict(noop <= TARGET_NOOP * floor)} |",
            f"| fair floor (its no-op) | {floor:.2f} | {', '.join(f'{t:.2f}' for t in shape['floors'])} | |",
            f"| {OUR_GC} | {frozen:.2f} | "
            f"{', '.join(f'{t:.2f}' for t in shape['frozen'])} | the no-op is {noop / frozen:.2f}x it |"]
