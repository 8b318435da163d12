"""Whose time it is: each job's process reporting its own clock at exit (`JOB_CLOCK`, `job_clock`),
Snakemake's benchmark files, how a run's jobs filled the cores (`packing`, from its log), and a
planning's main thread sampled, ours or Snakemake's (`plan_profile`), or under cProfile
(`profile_summary`)."""

from __future__ import annotations

import csv
import datetime
import json
import os
import pstats
import re
import statistics
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

from timing import BIN, CORES, say, verdict

from crmatrix.pipeline.warm.client import SOCKET_VAR

# Snakemake's benchmark samples a job's CPU time every 0.5 s, so a job of a second loses what it
# spent after the last sample. Instead each job's script process reports itself when it exits:
# its rule, its CPU time (getrusage: every thread, from interpreter start, and the children it
# waited for) and wall time since the
# kernel started it, the CPU and wall time inside its `crmatrix.pipeline.jobs.job` block (the
# stage's own work: what is left is the job's wrapper, Python's start, imports and Snakemake's
# preamble), and an evaluate_arm job the run file it wrote. The benchmark puts this module first
# on the jobs' PYTHONPATH.
JOB_CLOCK = """
import atexit, contextlib, json, os, re, resource, sys, time

_stage = {}

def _cpu():
    # the children it waited for too: plot_rows draws in forked processes, a peer system may run
    # its own (without them a job's CPU was left to the run's remainder, "Snakemake's")
    uses = map(resource.getrusage, (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return sum(u.ru_utime + u.ru_stime for u in uses)

def _report(rule):
    # Snakemake's object for a `script:` job, crmatrix.pipeline.shell_job's for a `light` one
    main = sys.modules["__main__"]
    job = getattr(main, "snakemake", None) or getattr(main, "job", None)
    if job is None:
        return
    ticks = int(open("/proc/self/stat").read().rsplit(")", 1)[1].split()[19])  # starttime, field 22
    wall = time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK")
    # a PID alone is reused within a long run (pid_max may be 32768 on a busy machine): with its
    # start time, each process's report has a name of its own
    out = os.path.join(os.environ["JOB_CLOCK_DIR"], f"{os.getpid()}-{ticks}.json")
    with open(out, "w") as f:
        json.dump({"rule": rule, "run": dict(job.output.items()).get("run"),
                   "wall": wall, "cpu": _cpu(),
                   "stage_wall": _stage.get("wall"), "stage_cpu": _stage.get("cpu")}, f)

def _timed(job):
    @contextlib.contextmanager
    def timed(*args, **kwargs):
        with job(*args, **kwargs):
            cpu, wall = _cpu(), time.perf_counter()
            try:
                yield
            finally:
                _stage.update(cpu=_cpu() - cpu, wall=time.perf_counter() - wall)
    return timed

# Snakemake runs a rule's script as .snakemake/scripts/tmpXXXX.<rule>.py; a `light` rule's
# shell command runs workflow/scripts/<rule>.py itself
_SCRIPT = re.compile(r"(?:\\.|/workflow/scripts/)(\\w+)\\.py$")

def _rule():
    found = _SCRIPT.search(sys.argv[0]) if sys.argv and sys.argv[0] else None
    return found.group(1) if found else None

def _clocked():
    from crmatrix.pipeline import jobs as _jobs  # the script imports it first thing anyway

    _jobs.job = _timed(_jobs.job)
    atexit.register(lambda: _rule() and _report(_rule()))

if "JOB_CLOCK_DIR" in os.environ:
    if _rule() and not ("/workflow/scripts/" in sys.argv[0] and os.environ.get(@SOCKET_VAR@)):
        _clocked()
    else:  # a warm server (crmatrix.pipeline.warm), or a light job it is handed: it forks the job's process
        os.register_at_fork(after_in_child=_clocked)
""".replace("@SOCKET_VAR@", repr(SOCKET_VAR))


def job_clock(ws: Path) -> dict[str, str]:
    """The environment under which each evaluate_arm job of the workspace reports its clock
    (JOB_CLOCK first on its PYTHONPATH). Bytecode written and reused, as on a user's machine (a
    shell with PYTHONDONTWRITEBYTECODE=1 would have every job compile crmatrix's sources again,
    ~0.1 s of CPU each)."""
    (ws / "job-clock" / "site").mkdir(parents=True)
    (ws / "job-clock" / "site" / "sitecustomize.py").write_text(JOB_CLOCK)
    return {"PYTHONPATH": os.pathsep.join([str(ws / "job-clock" / "site"), str(ws / "src")]),
            "JOB_CLOCK_DIR": str(ws / "job-clock"), "PYTHONDONTWRITEBYTECODE": ""}

def job_reports(clock_dir: Path) -> list[dict]:
    """Each job's JOB_CLOCK report in `clock_dir` (`<pid>-<ticks>.json`; not the whole run's
    `run.json` that swe_bench.py --run writes beside them)."""
    return [json.loads(p.read_text()) for p in sorted(clock_dir.glob("*-*.json"))]


def clock_per_rule(clock_dir: Path) -> dict[str, dict]:
    """Rule -> {jobs, wall, cpu}: the JOB_CLOCK reports in `clock_dir` summed per rule."""
    out: dict[str, dict] = {}
    for timing in job_reports(clock_dir):
        r = out.setdefault(timing["rule"], {"jobs": 0, "wall": 0.0, "cpu": 0.0})
        r["jobs"] += 1
        r["wall"] += timing["wall"]
        r["cpu"] += timing["cpu"]
    return out

def overhead_rows(clock: list[dict], tsv: dict[str, dict] | None = None) -> list[dict]:
    """Per rule, over its jobs' own reports (JOB_CLOCK): CPU of the process, of its stage, and the
    rest (its wrapper), medians and sums, with Snakemake's benchmark wall time (`tsv`, from
    `benchmark_tsvs`) beside them."""
    rules = sorted({c["rule"] for c in clock})
    rows = []
    for rule in rules:
        cs = [c for c in clock if c["rule"] == rule and c["stage_cpu"] is not None]
        walls = [t["s"] for t in (tsv or {}).values() if t["rule"] == rule]
        cpu, stage = sum(c["cpu"] for c in cs), sum(c["stage_cpu"] for c in cs)
        rows.append({"rule": rule, "jobs": len(cs), "cpu": statistics.median(c["cpu"] for c in cs),
                     "stage": statistics.median(c["stage_cpu"] for c in cs),
                     "wrapper": statistics.median(c["cpu"] - c["stage_cpu"] for c in cs),
                     "share": (cpu - stage) / cpu, "ratio": (cpu - stage) / stage if stage else float("inf"),
                     "tsv_s": statistics.median(walls) if walls else None, "cpu_sum": cpu, "stage_sum": stage})
    return rows


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


def cpu_by_rule(clone: Path) -> dict[str, tuple[int, float, float]]:
    """rule -> (jobs, wall seconds, CPU seconds) from each job's Snakemake benchmark file; the CPU
    from the jobs' own reports instead where the run made them (JOB_CLOCK, in `job-clock`): a
    benchmark file misses what a job spent after its last sample, and sees only the client of a
    job that a warm server started (crmatrix.pipeline.warm)."""
    clock = clock_per_rule(clone / "job-clock") if (clone / "job-clock").is_dir() else {}
    out: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0.0])
    for tsv in sorted((clone / "logs" / "benchmarks").rglob("*.tsv")):
        rule = tsv.relative_to(clone / "logs" / "benchmarks").parts[0]
        row = benchmark_row(tsv)
        out[rule][0] += 1
        out[rule][1] += float(row["s"])
        out[rule][2] += float(row["cpu_time"])
    return {r: (n, wall, clock[r]["cpu"] if r in clock else cpu) for r, (n, wall, cpu) in sorted(out.items())}


# A time stamp line of Snakemake's log, to the second.
STAMP = re.compile(r"^\[(\w{3} \w{3} +\d+ [\d:]{8} \d{4})\]$", re.M)


def log_time(stamp: str) -> datetime.datetime:
    """The time a STAMP's group names."""
    return datetime.datetime.strptime(stamp, "%a %b %d %H:%M:%S %Y")


def packing(log: str, cores: int = CORES) -> dict:
    """How a run's jobs filled the cores, from Snakemake's log (one-second stamps): each job's
    start, end, rule and declared threads; per second, the threads the running jobs declare.
    `occupancy`: declared threads (at most `cores`) summed over the seconds / (wall x cores);
    `short`: seconds with fewer declared threads than cores, and the rules running in them
    (what the other cores waited behind); `per_rule`: wall seconds x threads per rule."""
    jobs, stamp, current = {}, None, None
    for line in log.splitlines():
        if m := STAMP.match(line):
            stamp = log_time(m.group(1)).timestamp()
        elif m := re.match(r"^(?:local)?rule (\w+):$", line):
            current = {"rule": m.group(1), "start": stamp, "threads": 1}
        elif current is not None and (m := re.match(r"^\s+jobid: (\d+)$", line)):
            jobs[int(m.group(1))] = current
        elif current is not None and (m := re.match(r"^\s+threads: (\d+)$", line)):
            current["threads"] = int(m.group(1))
        elif m := re.match(r"^Finished jobid: (\d+)", line):
            jobs[int(m.group(1))]["end"] = stamp
    done = [j for j in jobs.values() if "end" in j and j["rule"] != "all"]
    if not done:
        return {"occupancy": 0.0, "short": {}, "per_rule": {}}
    t0, t1 = min(j["start"] for j in done), max(j["end"] for j in done)
    short: dict[str, int] = {}
    busy = 0
    for t in range(int(t0), int(t1)):
        running = [j for j in done if j["start"] <= t < j["end"]]
        threads = sum(j["threads"] for j in running)
        busy += min(threads, cores)
        if threads < cores:
            for rule in {j["rule"] for j in running} or {"(nothing running)"}:
                short[rule] = short.get(rule, 0) + 1
    per_rule: dict[str, float] = {}
    for j in done:
        per_rule[j["rule"]] = per_rule.get(j["rule"], 0) + (j["end"] - j["start"]) * j["threads"]
    return {"occupancy": busy / (max(t1 - t0, 1) * cores), "short": short, "per_rule": per_rule,
            "wall": t1 - t0, "short_s": sum(1 for t in range(int(t0), int(t1))
                                             if sum(j["threads"] for j in done if j["start"] <= t < j["end"]) < cores)}


# Samples the main thread's stack every 2 ms while Snakemake plans: a sample is ours when a frame
# of our files (the Snakefile, its rule files, crmatrix) is on the stack, Snakemake's own otherwise.
PLAN_SAMPLER = """
import json, runpy, sys, threading, time
out, ours, argv = sys.argv[1], tuple(sys.argv[2].split(":")), sys.argv[3:]
main, counts, done = threading.get_ident(), {"ours": 0, "snakemake": 0}, threading.Event()

def sample():
    while not done.wait(0.002):
        frame = sys._current_frames().get(main)
        while frame is not None and not frame.f_code.co_filename.startswith(ours):
            frame = frame.f_back
        counts["snakemake" if frame is None else "ours"] += 1

threading.Thread(target=sample, daemon=True).start()
sys.argv = argv
t0 = time.perf_counter()
try:
    runpy.run_path(argv[0], run_name="__main__")
except SystemExit:
    pass
finally:
    done.set()
    json.dump({**counts, "wall": time.perf_counter() - t0}, open(out, "w"))
"""


def plan_profile(ws: Path, config: str, env: dict[str, str]) -> dict:
    """`snakemake -n` of a finished matrix, its time split between ours and Snakemake's own by
    sampling its main thread's stack: ours while a frame of the Snakefile, its rule files or
    crmatrix is on it (imports and config validation at the Snakefile's start, input functions,
    params, code hashes), Snakemake's own otherwise (its start, the DAG over the jobs' files,
    each output's check)."""
    (ws / "plan_sampler.py").write_text(PLAN_SAMPLER)
    run_env = {**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}", "HF_HUB_OFFLINE": "1", **env}
    ours = ":".join(str(ws / part) for part in ("src", "workflow", "Snakefile"))
    subprocess.run([sys.executable, "plan_sampler.py", str(ws / "plan.json"), ours, str(BIN / "snakemake"), "-n",
                    "--cores", str(CORES), "all", "--configfile", config],
                   cwd=ws, env=run_env, capture_output=True, check=True, timeout=600)
    counts = json.loads((ws / "plan.json").read_text())
    share = counts["ours"] / max(counts["ours"] + counts["snakemake"], 1)
    return {"wall": counts["wall"], "share": share}


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


TARGET_EVAL_OVERHEAD = 0.25  # issue 48: median seconds of an evaluation job beyond its searches


def evaluation_overhead(ws: Path) -> list[dict]:
    """Per evaluate_arm job of the workspace: its process's wall and CPU time (JOB_CLOCK), its
    queries' search time and the difference, the overhead (starting Python, loading the index,
    the query vectors, the token counter...). On a shared machine the wall time mostly measures
    the load; the CPU time is what a quiet machine's wall time would roughly be."""
    rows = []
    for timing in job_reports(ws / "job-clock"):
        if timing["rule"] != "evaluate_arm":
            continue
        run = json.loads((ws / timing["run"]).read_text())
        search = sum(q["elapsed_ms"] for m in run["methods"].values() for q in m["queries"]) / 1000
        wall, cpu = timing["wall"], timing["cpu"]
        # the job as Snakemake timed it: its shell, and a warm job's client too (crmatrix.pipeline.warm)
        cell = Path(timing["run"]).relative_to("results/runs").with_suffix(".tsv")
        job_wall = float(benchmark_row(ws / "logs" / "benchmarks" / "evaluate_arm" / cell)["s"])
        rows.append({"cell": timing["run"], "wall": wall, "cpu": cpu, "search": search, "overhead": wall - search,
                     "cpu_overhead": cpu - search, "job_wall": job_wall, "job_overhead": job_wall - search,
                     "searches": sum(len(m["queries"]) for m in run["methods"].values())})
    return rows


def benchmark_row(tsv: Path) -> dict[str, str]:
    """A Snakemake benchmark file's row."""
    with tsv.open() as f:
        return next(csv.DictReader(f, delimiter="\t"))

def overhead_table(rows: list[dict]) -> None:
    """The per-job table of `evaluation_overhead`'s rows and the verdict on issue 22's target."""
    keys = ("wall", "cpu", "search", "overhead", "cpu_overhead", "job_wall", "job_overhead")
    med = {k: statistics.median(r[k] for r in rows) for k in keys}
    say("| per job | median s | max s |")
    say("|---|---:|---:|")
    for k, label in (("wall", "job wall time (its process)"), ("cpu", "job CPU time (its process)"),
                     ("search", "searches (elapsed_ms summed)"), ("overhead", "overhead (wall - searches)"),
                     ("cpu_overhead", "CPU - searches"),
                     ("job_wall", "job wall time as Snakemake's benchmark file has it (its shell and client too)"),
                     ("job_overhead", "overhead on that wall time")):
        say(f"| {label} | {med[k]:.2f} | {max(r[k] for r in rows):.2f} |")
    say("")
    say(f"Median overhead **{med['overhead']:.2f} s** (issue 22: <= 0.4 s on a quiet machine): "
        f"{verdict(med['overhead'] <= 0.4)}; on CPU time (about a quiet machine's wall time) "
        f"{med['cpu_overhead']:.2f} s: {verdict(med['cpu_overhead'] <= 0.4)}. On the job's wall time as "
        f"Snakemake timed it, **{med['job_overhead']:.2f} s** (issue 48: <= {TARGET_EVAL_OVERHEAD} s): "
        f"{verdict(med['job_overhead'] <= TARGET_EVAL_OVERHEAD)}.")
    say("")
