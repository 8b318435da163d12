"""Scaling benchmark (issue 29, point 3), run by hand (not in CI):

    PYTHONPATH=src .venv/bin/python benchmarks/scaling.py
    PYTHONPATH=src .venv/bin/python benchmarks/scaling.py --finished WS CONFIG REV

Synthetic matrices of ~1k, ~5k and ~20k jobs, each in its own copy of the project (under the
system's temporary directory; no ../shared needed). Per size: planning (`snakemake -n` of the
matrix with nothing done, and the share of it in our code), the no-op on a finished run, and
Snakemake's fair floor for the same DAG; the growth exponent b of time ~ a * jobs^b for each; the
per-job overhead of the 1k matrix run for real. Prints a Markdown report and writes it to
benchmarks/results/scaling-<date>.md.

The DAG's shape: the default matrix (config/config.yaml) with its builtin system alone (the peer
installs from PyPI): its 13 arms, two models, four methods and its release/candidate gate, over
three corpora -- `self` (this repository at the default matrix's pin, 20 files), and the tests'
tiny git repository and JavaScript path corpus (tests/conftest.py, tests/test_workflow.py) --
and D datasets, round-robin over the corpora, each a seeded sample of its corpus's queries
(datasets/self.json's, the tests'). The matrix grows by datasets, as a matrix of many
repositories' query sets does: 31 jobs per dataset (an evaluation and its cell per arm, the
dataset's preparation, audit, grep baseline and two query embeddings), 25 for the corpora, 23
for the models, the matrix, the gate and the charts.

A finished run: the 1k matrix is run for real. The 5k and 20k matrices would take hours, so
their finished state is made the way Snakemake marks jobs done itself: every planned output
created (empty; a directory where the job's rule has one), then `snakemake --touch --forceall`,
which walks the DAG in order, touching each job's outputs and writing its metadata record as a
finished job's (the same code path, `persistence.finished`). (Without --forceall, outputs that
exist and have no record are up to date to Snakemake: it would touch nothing and record
nothing, and the no-op would read no records.) A no-op reads no output's contents: only each
output's existence, its mtime (a directory's from its `.snakemake_timestamp`) and its metadata
record. The method is checked at 1k: a second copy of the 1k matrix made finished that way,
its records against the real run's, and its no-op beside the real run's.

The fair floor: a trivial Snakefile of the same DAG -- one job per real job, with as many input
and output files (a directory where the real one is), each input the output of the same
producer as in the real DAG, or a source file -- finished the same way (`--touch`), its no-op
timed like the matrix's. Our Snakefile ends in `gc.freeze()` (its comment says why), which any
Snakefile could: a copy of the floor ending in it too is timed beside it, and the report gives
the no-op against both.

With `--finished WS CONFIG REV`, the same for one finished run of a real config: planning in a
fresh copy of revision REV, the no-op in WS against the fair floor of its DAG (written to
benchmarks/results/dag-<config>-<date>.md); the seed matrix's, after `pipeline.py seed` with
its workspace kept (`--keep`).
"""

from __future__ import annotations

import base64
import datetime
import json
import os
import platform
import pstats
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pipeline
import yaml
from pipeline import BIN, CORES, ROOT, overhead_rows, say, snakemake, verdict

sys.path.insert(0, str(ROOT / "tests"))
# the tests' tiny corpora and their queries
from conftest import make_two_commit_repo
from test_workflow import GIT_DATASET, MORE_JS, PATH_CORPUS, PATH_DATASET

# label -> datasets; jobs = 31 per dataset + 48, `all` aside (the docstring's shape)
SIZES = {"1k": 31, "5k": 160, "20k": 644}
DEFAULT_SIZES = dict(SIZES)
CONFIG = "config/scaling.yaml"
SELF_SAMPLE = 14  # queries per dataset of `self` (of datasets/self.json's 28)
TARGET_PLAN_S, TARGET_NOOP, TARGET_OVERHEAD = 60.0, 1.3, 0.20
REPEATS = 3  # timed runs of each figure, the fastest kept (the machine is shared)
TODAY = datetime.date.today().isoformat()


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def write_matrix(ws: Path, datasets: int, repo: Path, commit: str) -> str:
    """The scaling matrix of `datasets` datasets in the workspace (the docstring's shape); its git
    corpus `repo` at `commit` lies outside it, so that two copies plan the same parameters."""
    for rel, text in {**PATH_CORPUS, **MORE_JS}.items():
        (ws / "local" / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / "local" / rel).write_text(text)
    cfg = yaml.safe_load((ws / "config" / "config.yaml").read_text())
    # the workspace copy is no git repository: `self` is cloned from this checkout
    cfg["corpora"] = {"self": {**cfg["corpora"]["self"], "git": str(ROOT)},
                      "gitc": {"git": str(repo), "commit": commit},
                      "pathc": {"path": "local", "language": "javascript"}}
    pools = {"self": json.loads((ROOT / "datasets" / "self.json").read_text()), "gitc": GIT_DATASET,
             "pathc": PATH_DATASET}
    (ws / "ds").mkdir()
    cfg["datasets"] = {}
    for k in range(datasets):
        corpus = list(pools)[k % len(pools)]
        pool = pools[corpus]
        name = f"d{k:04d}"
        (ws / "ds" / f"{name}.json").write_text(
            json.dumps(random.Random(k).sample(pool, min(len(pool), SELF_SAMPLE)), indent=1))
        cfg["datasets"][name] = {"file": f"ds/{name}.json", "corpus": corpus,
                                 "archetype": ("library", "framework")[k % 2]}
    cfg["systems"] = {"builtin": cfg["systems"]["builtin"]}
    (ws / CONFIG).write_text(yaml.safe_dump(cfg, sort_keys=False))
    return CONFIG


# -- the DAG as Snakemake plans it, and a finished state of it ----------------------------------

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


def create_outputs(ws: Path, jobs: list[dict], dirs: set[tuple[str, int]]) -> None:
    """Every output of the jobs, empty (a no-op never reads one)."""
    for j in jobs:
        for k, out in enumerate(j["output"]):
            if (j["rule"], k) in dirs:
                (ws / out).mkdir(parents=True, exist_ok=True)
            else:
                (ws / out).parent.mkdir(parents=True, exist_ok=True)
                (ws / out).touch()


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


def touch_matrix(ws: Path, config: str, jobs: list[dict], dirs: set[tuple[str, int]]) -> float:
    """The matrix's planned jobs made finished without running them (the docstring's method);
    seconds of the `--touch` run."""
    create_outputs(ws, jobs, dirs)
    secs, (out, _) = snakemake(ws, config, keep=True, launcher=TOUCH)
    if "not touched because they don't exist" in out:
        sys.exit(f"--touch in {ws} found outputs missing:\n{out[-3000:]}")
    return secs


def records(ws: Path) -> dict[str, dict]:
    """Snakemake's metadata record of each output, by the output's path."""
    meta = ws / ".snakemake" / "metadata"
    # a name longer than the file system's limit is cut into directories, each part but the last "@"-prefixed
    return {base64.urlsafe_b64decode("".join(part.lstrip("@") for part in p.relative_to(meta).parts)).decode():
            json.loads(p.read_text()) for p in meta.rglob("*") if p.is_file()}


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
    """A copy of a finished floor whose Snakefile ends as ours does, in `gc.freeze()` (the
    Snakefile's comment): the floor of a Snakefile that takes the same measure. Its rules are
    unchanged, so it is finished too."""
    where = Path(tempfile.mkdtemp(prefix="crmatrix-bench-floor-frozen-", dir=floor.parent))
    shutil.copytree(floor, where, symlinks=True, dirs_exist_ok=True)
    with open(where / "Snakefile", "a") as f:
        f.write("\nimport gc\n\ngc.freeze()\n")
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
    plan_ws = pipeline.workspace("plan", rev=rev)
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
            f"| the floor ending in `gc.freeze()` as our Snakefile does | {frozen:.2f} | "
            f"{', '.join(f'{t:.2f}' for t in shape['frozen'])} | the no-op is {noop / frozen:.2f}x it |"]


def in_turn(**timers) -> dict[str, list[float]]:
    """Each timer's seconds over REPEATS rounds, the timers taking turns within a round, so that
    the figures compared meet the same load."""
    times: dict[str, list[float]] = {name: [] for name in timers}
    for _ in range(REPEATS):
        for name, timer in timers.items():
            times[name].append(timer())
    return times


# -- per size -----------------------------------------------------------------------------------


def plan_share(ws: Path, config: str) -> float:
    """The share of `snakemake -n`'s main-thread samples with our code on the stack
    (`pipeline.plan_profile`: the Snakefile, its rule files, crmatrix)."""
    return pipeline.plan_profile(ws, config, {"PYTHONPATH": str(ws / "src")})["share"]


def measure(label: str, datasets: int, parent: Path, corpus: tuple[Path, str], dirs: set | None,
            profile: bool) -> dict:
    """One size: planning, a finished state (run for real when `dirs` is None, else touched),
    its no-op and the fair floor; with `profile`, planning under cProfile too."""
    r = {"label": label, "datasets": datasets}
    ws = pipeline.workspace(f"scaling-{label}", parent=parent)
    config = write_matrix(ws, datasets, *corpus)
    # the first planning of a fresh copy compiles its modules and writes the code-hash memo
    r["plan_first"], (out, _) = snakemake(ws, config, "-n", keep=True)
    r["jobs_planned"] = planned_jobs(out)
    r["jobs"] = sum(1 for j in r["jobs_planned"] if j["rule"] != "all")
    r["plans"] = [snakemake(ws, config, "-n") for _ in range(REPEATS)]
    r["plan"] = min(r["plans"])
    r["plan_share"] = plan_share(ws, config)
    if profile:
        prof = parent / f"plan-{label}.prof"
        cprofile = [sys.executable, "-m", "cProfile", "-o", str(prof), str(BIN / "snakemake")]
        r["profile_wall"] = snakemake(ws, config, "-n", launcher=cprofile)
        r["profile"] = profile_summary(prof, ws)
    if dirs is None:
        r["finish"] = "run for real"
        r["finish_s"], (out, r["run_cpu"]) = snakemake(ws, config, keep=True, env=pipeline.job_clock(ws))
        r["clock"] = [json.loads(p.read_text()) for p in (ws / "job-clock").glob("*.json")]
        r["tsv"] = benchmark_tsvs(ws)
        dirs = directory_outputs(ws, r["jobs_planned"])
    else:
        r["finish"] = "`--touch`"
        r["finish_s"] = touch_matrix(ws, config, r["jobs_planned"], dirs)
    r["dirs"] = dirs
    r["finished_plan"], (out, _) = snakemake(ws, config, "-n", keep=True)
    finished(out, ws)
    r["noop_share"] = plan_share(ws, config)
    r["floor"] = finished_floor(parent, r["jobs_planned"], dirs)
    times = against_floors(lambda: snakemake(ws, config), r["floor"]["where"])
    r["noops"], r["floor"]["noops"], r["floor"]["frozen_noops"] = times["noop"], times["floor"], times["frozen"]
    r["noop"], r["floor"]["noop"], r["floor"]["frozen"] = min(times["noop"]), min(times["floor"]), min(times["frozen"])
    r["ws"] = ws
    return r


def touch_check(real: dict, parent: Path, corpus: tuple[Path, str]) -> dict:
    """The 1k matrix made finished by `--touch` in a second copy: its metadata records against the
    real run's, field by field, and its no-op against the real run's (timed in turn)."""
    ws = pipeline.workspace("scaling-touched", parent=parent)
    config = write_matrix(ws, real["datasets"], *corpus)
    touch_s = touch_matrix(ws, config, real["jobs_planned"], real["dirs"])
    finished(snakemake(ws, config, "-n", keep=True)[1][0], ws)
    times = in_turn(real=lambda: snakemake(real["ws"], config), touched=lambda: snakemake(ws, config))
    ran, touched = records(real["ws"]), records(ws)
    differ: dict[str, int] = {}
    for path, rec in ran.items():
        for key in set(rec) | set(touched.get(path, {})):
            if rec.get(key) != touched.get(path, {}).get(key):
                differ[key] = differ.get(key, 0) + 1
    shutil.rmtree(ws, ignore_errors=True)
    return {"touch": touch_s, "noop": min(times["touched"]), "noops": times["touched"],
            "real_noop": min(times["real"]), "real_noops": times["real"], "records": len(ran),
            "touched_records": len(touched), "shared": len(set(ran) & set(touched)), "differ": differ,
            "fields": sorted(set().union(*map(set, ran.values())))}


def benchmark_tsvs(ws: Path) -> dict[str, dict]:
    """Each job's Snakemake benchmark (logs/benchmarks/<rule>/...tsv): its rule, wall and CPU seconds."""
    out = {}
    for tsv in (ws / "logs" / "benchmarks").rglob("*.tsv"):
        header, row = tsv.read_text().splitlines()[:2]
        values = dict(zip(header.split("\t"), row.split("\t"), strict=True))
        out[str(tsv.relative_to(ws / "logs" / "benchmarks"))] = {
            "rule": tsv.relative_to(ws / "logs" / "benchmarks").parts[0], "s": float(values["s"]),
            "cpu": float(values["cpu_time"]) if values["cpu_time"] not in ("", "NA", "-") else None}
    return out


# -- where the time goes --------------------------------------------------------------------------


def profile_summary(prof: Path, ws: Path) -> dict:
    """From cProfile's stats of one planning: the total, the self time in our files (the Snakefile,
    the rule files, crmatrix), the time under our functions entered from Snakemake's (an upper
    bound: the Snakefile's body includes Snakemake's registering of the rules it defines), the
    functions of most self time, and the cumulative time of Snakemake's phases."""
    stats = pstats.Stats(str(prof)).stats
    ours = tuple(str(ws / part) for part in ("src", "workflow", "Snakefile"))

    def is_ours(func) -> bool:
        return func[0].startswith(ours)

    total = max(ct for _, _, _, ct, _ in stats.values())
    self_ours = sum(tt for f, (_, _, tt, _, _) in stats.items() if is_ours(f))
    under_ours = sum(ct for f, (_, _, _, _, callers) in stats.items() if is_ours(f)
                     for caller, (_, _, _, ct) in callers.items() if not is_ours(caller))
    top = sorted(stats.items(), key=lambda kv: -kv[1][2])[:15]

    def where(func) -> str:
        path = func[0]
        for prefix in (str(ws) + "/", "/site-packages/", "/lib/python3.11/"):
            if prefix in path:
                path = path.split(prefix, 1)[1]
        return f"{path}:{func[1]}({func[2]})"

    def cumulative(suffix: str, name: str) -> float:
        return sum(ct for f, (_, _, _, ct, _) in stats.items() if f[0].endswith(suffix) and f[2] == name)

    phases = {
        "the Snakefile's body (our config, plan and code hashes, Snakemake registering the rules)":
            cumulative(str(ws / "Snakefile"), "<module>"),
        "building the DAG (`Workflow._build_dag`)": cumulative("snakemake/workflow.py", "_build_dag"),
        "across the phases: our input functions and params (entered from Snakemake)": sum(
            ct for f, (_, _, _, _, callers) in stats.items() if f[0].startswith(str(ws / "workflow"))
            and f[2] != "<module>" for caller, (_, _, _, ct) in callers.items() if not is_ours(caller)),
        "printing the dry run's jobs (`DryrunExecutor.printjob`)": cumulative("executors/dryrun.py", "printjob"),
        "across the phases: Snakemake inspecting our functions' signatures (`get_function_params`)":
            cumulative("snakemake/common/__init__.py", "get_function_params"),
        "across the phases: Snakemake reading each job's script (`script.get_source`)":
            cumulative("snakemake/script/__init__.py", "get_source"),
        "Python's imports (`_find_and_load`, every module)": max(
            (ct for f, (_, _, _, ct, _) in stats.items() if f[2] == "_find_and_load"), default=0.0),
    }
    return {"total": total, "self_ours": self_ours, "under_ours": under_ours, "phases": phases,
            "top": [(where(f), nc, tt, ct) for f, (_, nc, tt, ct, _) in top]}


# -- the report -----------------------------------------------------------------------------------


def fit(jobs: list[int], secs: list[float]) -> tuple[float, float]:
    """(a, b) of secs ~ a * jobs^b, least squares in log-log."""
    b, log_a = np.polyfit(np.log(jobs), np.log(secs), 1)
    return float(np.exp(log_a)), float(b)


def report(results: list[dict], check: dict, start: str, end: str) -> None:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    version = subprocess.run([str(BIN / "snakemake"), "--version"], capture_output=True, text=True).stdout.strip()
    one = results[0]
    say(f"# Scaling benchmark — {TODAY}")
    say("")
    say(f"Machine: {CORES} cores, Python {platform.python_version()}, Snakemake {version}; crmatrix at {commit}. "
        f"Shared with other runs: each figure is the fastest of {REPEATS} runs (a no-op and its floor's taking "
        "turns), read beside the load. Bytecode written and reused, as on a user's machine.")
    say("")
    say(f"`uptime` at the start: `{start}`; at the end: `{end}`.")
    say("")
    say("The matrices (benchmarks/scaling.py's docstring): the default matrix's 13 arms, two models, builtin "
        "system (four methods) and gate, over three corpora (`self` at the default pin, the tests' tiny git "
        "repository and JavaScript path corpus) and D datasets round-robin over them, each a seeded sample of "
        "its corpus's queries; 31 jobs per dataset. The 1k matrix is run for real; the 5k and 20k ones are made "
        "finished by `snakemake --touch` over empty outputs (checked at 1k below). The fair floor: a trivial "
        "Snakefile of the same DAG (each job with as many inputs and outputs, the same producers), finished by "
        "`--touch`. Planning: `snakemake --profile profiles/local --cores 2 all --configfile ... -n` with nothing "
        "done (it prints every job); no-op: the same without `-n` on the finished run.")
    say("")
    say("## Figures")
    say("")
    say("| | " + " | ".join(r["label"] for r in results) + " |")
    say("|---|" + "---:|" * len(results))
    rows = [
        ("datasets", lambda r: str(r["datasets"])),
        ("jobs (`all` aside)", lambda r: str(r["jobs"])),
        ("load average (1 min) while the size was measured", lambda r: r["load"]),
        ("planning, first in a fresh copy, s", lambda r: f"{r['plan_first']:.1f}"),
        ("**planning**, s", lambda r: f"**{r['plan']:.1f}**"),
        ("planning per job, ms", lambda r: f"{1000 * r['plan'] / r['jobs']:.1f}"),
        ("planning: samples with our code on the stack", lambda r: f"{r['plan_share']:.0%}"),
        ("finished by", lambda r: r["finish"]),
        ("finishing, s", lambda r: f"{r['finish_s']:.0f}"),
        ("`-n` on the finished run, s", lambda r: f"{r['finished_plan']:.1f}"),
        ("**no-op**, s", lambda r: f"**{r['noop']:.1f}**"),
        ("no-op per job, ms", lambda r: f"{1000 * r['noop'] / r['jobs']:.1f}"),
        ("no-op: samples with our code on the stack", lambda r: f"{r['noop_share']:.0%}"),
        ("fair floor: jobs; finishing (`--touch`), s", lambda r: f"{r['floor']['jobs']}; {r['floor']['touch']:.0f}"),
        ("fair floor (its no-op), s", lambda r: f"{r['floor']['noop']:.1f}"),
        ("fair floor per job, ms", lambda r: f"{1000 * r['floor']['noop'] / r['jobs']:.1f}"),
        ("**no-op / floor**", lambda r: f"**{r['noop'] / r['floor']['noop']:.2f}x**"),
        ("the floor ending in `gc.freeze()` as our Snakefile does (its no-op), s",
         lambda r: f"{r['floor']['frozen']:.1f}"),
        ("no-op / that floor", lambda r: f"{r['noop'] / r['floor']['frozen']:.2f}x"),
        ("runs timed: planning; no-op; floor; floor ending in `gc.freeze()`, s", lambda r: "; ".join(
            ", ".join(f"{t:.1f}" for t in ts)
            for ts in (r["plans"], r["noops"], r["floor"]["noops"], r["floor"]["frozen_noops"]))),
    ]
    for name, cell in rows:
        say(f"| {name} | " + " | ".join(cell(r) for r in results) + " |")
    say("")
    jobs = [r["jobs"] for r in results]
    if len(set(jobs)) > 1:  # a growth needs two sizes at least
        say("## Growth: time ~ a * jobs^b (least squares in log-log over the sizes)")
        say("")
        say("| | a (s) | **b** | jobs at which it reaches 60 s |")
        say("|---|---:|---:|---:|")
        for name, secs in (("planning", [r["plan"] for r in results]), ("no-op", [r["noop"] for r in results]),
                           ("fair floor", [r["floor"]["noop"] for r in results])):
            a, b = fit(jobs, secs)
            reach = (60 / a) ** (1 / b) if b > 0.1 else float("inf")  # flat: a fit of noise says nothing
            say(f"| {name} | {a:.3g} | **{b:.2f}** | {f'{reach:,.0f}' if reach < 1e9 else '—'} |")
        say("")
    say("## Targets")
    say("")
    for r in results:
        ratio = r["noop"] / r["floor"]["noop"]
        say(f"- {r['label']} ({r['jobs']} jobs): planning {r['plan']:.1f} s (<= {TARGET_PLAN_S:.0f} s): "
            f"{verdict(r['plan'] <= TARGET_PLAN_S)}; no-op {r['noop']:.1f} s = {ratio:.2f}x the fair floor's "
            f"{r['floor']['noop']:.1f} s (<= {TARGET_NOOP}x): {verdict(ratio <= TARGET_NOOP)}; against the floor "
            f"ending in `gc.freeze()` as ours does, {r['noop'] / r['floor']['frozen']:.2f}x.")
    rows = overhead_rows(one["clock"], one["tsv"])
    cpu, stage = sum(r["cpu_sum"] for r in rows), sum(r["stage_sum"] for r in rows)
    share = (cpu - stage) / cpu
    say(f"- per-job overhead (the {one['label']} run, every job): the wrapper's CPU is {share:.0%} of the jobs' CPU "
        f"(<= {TARGET_OVERHEAD:.0%}): {verdict(share <= TARGET_OVERHEAD)}; {(cpu - stage) / stage:.0%} of the "
        "stages' own CPU.")
    say("")
    prof = results[-1]["profile"]
    say(f"## Where planning's time goes (cProfile, the {results[-1]['label']} matrix, once)")
    say("")
    say(f"`snakemake -n` under cProfile: {results[-1]['profile_wall']:.0f} s wall, {prof['total']:.1f} s profiled "
        f"(cProfile slows Python about 2x; read shares). Self time in our code (the Snakefile, the rule files, "
        f"crmatrix): **{prof['self_ours']:.1f} s, {prof['self_ours'] / prof['total']:.1%}**; under our functions "
        f"entered from Snakemake's (an upper bound: it counts Snakemake registering the rules the Snakefile "
        f"defines): {prof['under_ours']:.1f} s, {prof['under_ours'] / prof['total']:.0%}.")
    say("")
    say("| phase | cumulative s | share |")
    say("|---|---:|---:|")
    for name, secs in prof["phases"].items():
        say(f"| {name} | {secs:.1f} | {secs / prof['total']:.0%} |")
    say("")
    say("| function (most self time) | calls | self s | cumulative s |")
    say("|---|---:|---:|---:|")
    for name, calls, tt, ct in prof["top"]:
        say(f"| `{name}` | {calls} | {tt:.2f} | {ct:.2f} |")
    say("")
    say(f"## Per-job overhead (the {one['label']} matrix run for real, every job)")
    say("")
    clock_cpu = sum(c["cpu"] for c in one["clock"])
    say(f"The run: {one['finish_s']:.0f} s wall, {one['run_cpu']:.0f} CPU s (Snakemake and its jobs, /usr/bin/time); "
        f"its {len(one['clock'])} jobs' processes {clock_cpu:.0f} CPU s, each reporting itself at exit "
        "(pipeline.py's JOB_CLOCK: getrusage from the interpreter's start, and the CPU inside its "
        "`crmatrix.pipeline.jobs.job` block: the stage's own work, lazy imports inside it included); Snakemake's "
        f"main process the rest, {one['run_cpu'] - clock_cpu:.0f} CPU s = "
        f"{(one['run_cpu'] - clock_cpu) / one['jobs']:.2f} s per job (scheduling, each script's preamble "
        "written, metadata). Wrapper = job CPU - stage CPU: Python's start, imports, Snakemake's preamble.")
    say("")
    say("| rule | jobs | job CPU s (median) | stage CPU s | wrapper CPU s | wrapper / job CPU | wrapper / stage | "
        "benchmark TSV wall s (median) |")
    say("|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in sorted(rows, key=lambda r: -r["cpu_sum"]):
        tsv_s = "—" if r["tsv_s"] is None else f"{r['tsv_s']:.2f}"
        say(f"| {r['rule']} | {r['jobs']} | {r['cpu']:.2f} | {r['stage']:.2f} | {r['wrapper']:.2f} | "
            f"{r['share']:.0%} | {r['ratio']:.0%} | {tsv_s} |")
    say(f"| all | {sum(r['jobs'] for r in rows)} | | | | **{share:.0%}** | {(cpu - stage) / stage:.0%} | |")
    say("")
    say(f"## The finished state by `--touch`, checked at {one['label']}")
    say("")
    differ = ", ".join(f"`{k}` {n}" for k, n in sorted(check["differ"].items())) or "none"
    say(f"A second copy of the {one['label']} matrix, its {one['jobs']} jobs' outputs created empty and `--touch`ed "
        f"({check['touch']:.0f} s): Snakemake then plans nothing. Metadata records: {check['records']} from the real "
        f"run, {check['touched_records']} touched, {check['shared']} for the same outputs; fields "
        f"({', '.join(check['fields'])}) differing, with the number of records: {differ}. Its no-op and the real "
        f"run's, timed in turn: **{check['noop']:.1f} s** (runs {', '.join(f'{t:.1f}' for t in check['noops'])}) "
        f"against **{check['real_noop']:.1f} s** (runs {', '.join(f'{t:.1f}' for t in check['real_noops'])}).")
    say("")


def finished_main(ws: Path, config: str, rev: str) -> None:
    """`scaling.py --finished WS CONFIG REV`: the DAG of a finished run of CONFIG in WS (a copy of
    revision REV beside ../shared, such as `pipeline.py seed` leaves with its workspace kept),
    written to benchmarks/results/dag-<config>-<date>.md."""
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    start = uptime()
    shape = finished_dag(ws, config, rev)
    say(f"# The DAG of {config}, finished — {TODAY}")
    say("")
    say(f"The finished run in {ws.name} (crmatrix at {rev}); the no-op and the floors fastest of {REPEATS} runs "
        f"taking turns; {start} at the start, {uptime()} at the end.")
    for line in dag_table(shape):
        say(line)
    dest = ROOT / "benchmarks" / "results" / f"dag-{Path(config).stem}-{TODAY}.md"
    dest.write_text("\n".join(pipeline.out_lines) + "\n")
    print(f"wrote {dest}")


def main() -> None:
    """`scaling.py [D ...]`: the sizes' datasets (default: SIZES; a few small ones try the benchmark out,
    one of 31 measures the 1k size alone); `scaling.py --finished WS CONFIG REV`: `finished_main`."""
    if sys.argv[1:2] == ["--finished"]:
        ws, config, rev = sys.argv[2:5]
        return finished_main(Path(ws).resolve(), config, rev)
    if sys.argv[1:]:
        SIZES.clear()
        SIZES.update({f"{d} datasets": int(d) for d in sys.argv[1:]})
    # bytecode written and reused by every Snakemake and job process, as on a user's machine (with
    # PYTHONDONTWRITEBYTECODE=1 each would compile crmatrix's modules again)
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    start = uptime()
    parent = Path(tempfile.mkdtemp(prefix="crmatrix-bench-scaling-"))
    try:
        corpus = make_two_commit_repo(parent / "gitrepo")[:2]
        results, dirs = [], None
        labels = list(SIZES)
        for label in labels:
            print(f"{datetime.datetime.now():%H:%M:%S} {label}: {uptime()}", flush=True)
            with pipeline.LoadSampler() as load:
                r = measure(label, SIZES[label], parent, corpus, dirs, profile=label == labels[-1])
            r["load"] = load.summary()
            dirs = r["dirs"]
            if label == labels[0]:
                check = touch_check(r, parent, corpus)
            else:
                shutil.rmtree(r["ws"], ignore_errors=True)
            results.append(r)
        report(results, check, start, uptime())
    finally:
        shutil.rmtree(parent, ignore_errors=True)
    # a run of other sizes is named by them, beside (not over) a run of the default ones
    sizes = "" if SIZES == DEFAULT_SIZES else "-" + "-".join(map(str, SIZES.values()))
    dest = ROOT / "benchmarks" / "results" / f"scaling{sizes}-{TODAY}.md"
    dest.write_text("\n".join(pipeline.out_lines) + "\n")
    print(f"wrote {dest}")


if __name__ == "__main__":
    main()
