"""Pipeline benchmark, run by hand (not in CI): `.venv/bin/python benchmarks/pipeline.py`.

Prints, and writes to benchmarks/results/pipeline-<date>.md (and the seed matrix's phase matrix
to seed-matrix-<date>.md), with their targets:
  S1-S6. (issues 20 and 22, `seed`) the cold seed matrix (`config/seed-matrix.yaml`, its derived
     datasets included: empty results, empty embedding cache, models exported on the way) on this
     machine's cores (target <= 25 min on 2 cores) with its core utilisation (target >= 80 %) and
     what an idle core waited behind; each language's pooled MDE (target <= 0.03); every
     evaluation's overhead (target <= 0.4 s); its no-op rerun against a trivial Snakefile with as
     many finished jobs (target <= 1.3x); one added query-time arm (target <= 3 % of the cold
     run); the largest job's peak RSS, and embeddings computed vs symbols x arms;
  5. four arms cold in one run vs four single-arm cold runs on the default `requests` corpus
     (target <= 0.35x);
  6. (issue Evidence) what an evaluation costs beyond its searches, over the default matrix's builtin cells:
     each `evaluate_arm` process's wall and CPU time (reported by the process itself, JOB_CLOCK)
     minus its queries' search time (the run's per-query elapsed_ms summed), median over the jobs
     (target <= 0.4 s on a quiet machine, so that 300 queries and 20+ arms multiply searches, not loading).
  7. (issue 20, `added [REV]`) the default matrix (`config/config.yaml`) cold, its no-op rerun
     against a trivial Snakefile with as many finished jobs, and one added query-time arm: its
     jobs per rule and its share of the cold run; the cold run's core utilisation (CPU time of
     Snakemake and every job / (wall x cores)). With REV (a git revision), the same in a copy of
     REV after it, so the two compare within one run on a shared machine.

Each run happens in its own copy of the project beside it (so ../shared resolves) with its own
cache directory: cold means cold. Needs ../shared (the git mirror of the seed corpora).
"""

from __future__ import annotations

import concurrent.futures
import csv
import datetime
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import yaml

from crmatrix import config

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
SEED = "config/seed-matrix.yaml"
FOUR_ARMS = ["baseline", "2e-only", "2b2c-only", "stacked"]
ADDED_ARM = {"rrf-k30": {"CODELENS_EMBED_HINT_AUTO": "0", "CRMATRIX_FUSION": "rrf", "CRMATRIX_RRF_K": "30"}}
CORES = os.cpu_count() or 2
TODAY = datetime.date.today().isoformat()  # the day the benchmark started: one date for all its files
out_lines: list[str] = []


def say(line: str = "") -> None:
    print(line, flush=True)
    out_lines.append(line)


WORKSPACES: list[Path] = []


def workspace(name: str, rev: str | None = None, parent: Path | None = None) -> Path:
    """A copy of the project's tracked files (at git revision `rev`, else as they are in the
    checkout), beside the project so ../shared resolves (`parent`: elsewhere, for a copy that
    needs no ../shared)."""
    dest = Path(tempfile.mkdtemp(prefix=f"crmatrix-bench-{name}-", dir=parent or ROOT.parent))
    WORKSPACES.append(dest)
    if rev is not None:
        archive = subprocess.run(["git", "archive", rev], cwd=ROOT, capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
        return dest
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split("\0")
    for rel in filter(None, files):
        if (ROOT / rel).is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, dest / rel)
    return dest


def snakemake(ws: Path, config: str, *flags: str, keep: bool = False, env: dict[str, str] | None = None,
              launcher: list[str] | None = None, venv_bin: Path = BIN):
    """Seconds of one `snakemake --profile profiles/local --cores N all --configfile CONFIG` in the
    workspace, as `make run` runs it (its library imported from the workspace's src/, so a copy
    of another revision runs its own code; its cache the config's, results/cache in the workspace;
    `env`: more variables; `launcher`: the command starting Snakemake, when not `venv_bin`'s script; `venv_bin`:
    the virtualenv's, this checkout's by default); with `keep`, also its output and the CPU seconds of
    it and its jobs (from /usr/bin/time: the process tree's, waited-for children included)."""
    env = {**os.environ, "PATH": f"{venv_bin}:{os.environ['PATH']}", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "PYTHONPATH": str(ws / "src"), **(env or {})}
    timing = ws / "time.txt"
    t0 = time.perf_counter()
    proc = subprocess.run(["/usr/bin/time", "-f", "%U %S", "-o", str(timing),
                           *(launcher or [str(venv_bin / "snakemake")]), "--profile", "profiles/local", "--cores",
                           str(CORES), "all", "--configfile", config, *flags],
                          cwd=ws, env=env, capture_output=True, text=True, timeout=3 * 3600)
    secs = time.perf_counter() - t0
    if proc.returncode:
        sys.exit(f"snakemake failed in {ws}:\n{proc.stderr[-3000:]}")
    if not keep:
        return secs
    cpu = sum(float(x) for x in timing.read_text().split()[-2:])
    return secs, (proc.stdout + proc.stderr, cpu)


def jobs_per_rule(output: str) -> dict[str, int]:
    """The job counts of Snakemake's "Job stats" table in a run's output (`all` left out)."""
    table = output.split("Job stats:", 1)[1] if "Job stats:" in output else ""
    counts = {}
    for line in table.splitlines()[3:]:
        parts = line.split()
        if len(parts) != 2 or not parts[1].isdigit():
            break
        if parts[0] not in ("all", "total"):
            counts[parts[0]] = int(parts[1])
    return counts


def job_stats(ws: Path) -> tuple[float, str, dict[str, float]]:
    """The largest peak RSS (MiB) over the run's jobs and which job it was; seconds per rule."""
    peak, who, per_rule = 0.0, "", {}
    for tsv in (ws / "logs" / "benchmarks").rglob("*.tsv"):
        rule = tsv.relative_to(ws / "logs" / "benchmarks").parts[0]
        with tsv.open() as f:
            for row in csv.DictReader(f, delimiter="\t"):
                rss = float(row["max_rss"]) if row["max_rss"] not in ("", "NA", "-") else 0.0
                per_rule[rule] = per_rule.get(rule, 0.0) + float(row["s"])
                if rss > peak:
                    peak, who = rss, str(tsv.relative_to(ws / "logs" / "benchmarks"))
    return peak, who, per_rule


def embedding_counts(ws: Path, config: str) -> tuple[int, int, int]:
    """(texts embedded over all indexes, symbols x arms of the builtin, distinct texts indexed)."""
    cfg = yaml.safe_load((ws / config).read_text())
    embedded, distinct = 0, set()
    for meta in sorted((ws / "results" / "index").glob("*/builtin/*/meta.json")):
        embedded += json.loads(meta.read_text())["embedding"]["embedded"]
        with (meta.parent / "texts.jsonl").open() as f:
            distinct.update((json.loads(line)["text_sha"], json.loads(meta.read_text())["model"]["sha256"])
                            for line in f)
    symbols = sum(sum(1 for _ in p.open()) for p in (ws / "results" / "symbols").glob("*.jsonl"))
    return embedded, symbols * len(cfg["arms"]), len(distinct)


def snakemake_floor(jobs: int = 0) -> float:
    """Seconds of a no-op run of a trivial Snakefile: one rule with nothing to do, or, with
    `jobs`, one rule of that many finished jobs (each touching a file), Snakemake's own cost of
    checking that many jobs, against which a no-op rerun of the matrix is read."""
    trivial = workspace("trivial")
    (trivial / "Snakefile").write_text(
        f"rule all:\n    input: expand('out/{{i}}.txt', i=range({jobs}))\n\n\n"
        "rule one:\n    output: 'out/{i}.txt'\n    shell: 'touch {output}'\n" if jobs else "rule all:\n    input: []\n")
    cmd = [str(BIN / "snakemake"), "--cores", str(CORES)]
    if jobs:
        subprocess.run(cmd, cwd=trivial, capture_output=True, check=True, timeout=3600)
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=trivial, capture_output=True, check=True, timeout=3600)
    return time.perf_counter() - t0


def verdict(ok: bool) -> str:
    return "met" if ok else "NOT met"


class LoadSampler:
    """The 1-minute load average every 30 s while a run goes on (the machines are shared: a
    wall time is read beside the load it met)."""

    def __init__(self):
        self.samples: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self):
        while not self._stop.is_set():
            self.samples.append(os.getloadavg()[0])
            self._stop.wait(30)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    def summary(self) -> str:
        s = self.samples or [os.getloadavg()[0]]
        return f"median {statistics.median(s):.1f}, max {max(s):.1f}, min {min(s):.1f} over {len(s)} samples"


def language_power(ws: Path) -> list[dict]:
    """The builtin's pooled groups per language from the matrix's `power` block."""
    power = json.loads((ws / "results" / "matrix" / "phase-matrix.json").read_text())["power"]
    return [g for g in power["groups"] if g["kind"] == "language" and g["system"] == "builtin"]


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


def seed_matrix() -> None:
    """Issues 20 and 22 on the seed matrix (its derived datasets included), one cold run: wall
    time, core utilisation and what the idle cores waited behind, each evaluation's overhead,
    each language's pooled MDE; then the no-op against a trivial Snakefile with as many finished
    jobs, and one added query-time arm."""
    ws = workspace("seed")
    env = job_clock(ws)
    with LoadSampler() as load:
        cold, (out, cpu) = snakemake(ws, SEED, keep=True, env=env)
    log = max((ws / ".snakemake" / "log").glob("*.snakemake.log"), key=lambda p: p.stat().st_mtime)
    pack = packing(log.read_text())
    cold_jobs = sum(jobs_per_rule(out).values())
    shutil.copy2(ws / "results" / "matrix" / "phase-matrix.md",
                 ROOT / "benchmarks" / "results" / f"seed-matrix-{TODAY}.md")
    rows = evaluation_overhead(ws)
    languages = language_power(ws)
    noop = snakemake(ws, SEED, env=env)
    noop_plan = snakemake(ws, SEED, "-n", env=env)
    floor = snakemake_floor(cold_jobs)
    profile = plan_profile(ws, SEED, env)
    cfg = yaml.safe_load((ws / SEED).read_text())
    cfg["arms"].update(ADDED_ARM)
    (ws / "config" / "seed-plus.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    peak, who, per_rule = job_stats(ws)  # the cold run's
    added_env = {**env, "JOB_CLOCK_DIR": str(ws / "job-clock-added")}
    (ws / "job-clock-added").mkdir()
    added, (added_out, added_cpu) = snakemake(ws, "config/seed-plus.yaml", keep=True, env=added_env)
    added_clock = clock_per_rule(ws / "job-clock-added")
    added_jobs = jobs_per_rule(added_out)
    added_log = max((ws / ".snakemake" / "log").glob("*.snakemake.log"), key=lambda p: p.stat().st_mtime)
    added_pack = packing(added_log.read_text())
    added_search = sum(q["elapsed_ms"] for run in (ws / "results" / "runs").rglob(f"{next(iter(ADDED_ARM))}.json")
                       for m in json.loads(run.read_text())["methods"].values() for q in m["queries"]) / 1000
    embedded, naive, distinct = embedding_counts(ws, SEED)
    arms = len(config.load(ws / SEED).arms)  # sweep cells included
    queries = sum(g["queries"] for g in languages)

    say(f"## S1. The cold seed matrix ({SEED}, derived datasets included, {CORES} cores)")
    say("")
    say(f"{len(cfg['corpora'])} corpora, {len(cfg['datasets'])} datasets ({queries} queries over the plain "
        f"datasets), {arms} arms; {cold_jobs} jobs. Load average (1 min) during the run: {load.summary()}.")
    say("")
    say(f"Wall time **{cold / 60:.1f} min** (issue 22: <= 25 min): {verdict(cold <= 25 * 60)}.")
    say("")
    say(f"Core utilisation, CPU seconds of Snakemake and every job / (wall x cores): "
        f"**{cpu / (cold * CORES):.0%}** (issue 20: >= 80 %): {verdict(cpu >= 0.8 * cold * CORES)}; "
        f"threads the running jobs declare / (wall x cores): {pack['occupancy']:.0%}; seconds with fewer "
        f"threads declared than cores: {pack['short_s']} of {pack['wall']:.0f}, by the rules running then "
        "(what an idle core waited behind): "
        + ", ".join(f"{r} {n} s" for r, n in sorted(pack["short"].items(), key=lambda kv: -kv[1])[:6]) + ".")
    say("")
    say("Job seconds per rule (Snakemake's benchmark files, summed over its jobs; jobs overlap on the cores), "
        "and declared threads x wall seconds from the log:")
    say("")
    say("| rule | job s | share | threads x s |")
    say("|---|---:|---:|---:|")
    total_rule_s = sum(per_rule.values())
    for rule, s in sorted(per_rule.items(), key=lambda kv: -kv[1]):
        say(f"| {rule} | {s:.0f} | {s / total_rule_s:.0%} | {pack['per_rule'].get(rule, 0):.0f} |")
    say("")
    say("## S2. What the matrix can tell, per language (builtin, pooled random effects over the plain datasets)")
    say("")
    say("| language | datasets | queries | pooled MDE (median over the arms moving 10 % of its queries) | <= 0.03 |")
    say("|---|---:|---:|---:|---|")
    for g in languages:
        mde = g["mde"]
        say(f"| {g['group']} | {g['datasets']} | {g['queries']} | "
            f"{'—' if mde is None else f'{mde:.3f}'} | {verdict(mde is not None and mde <= 0.03)} |")
    say("")
    say("## S3. Evaluation overhead (every `evaluate_arm` job of the cold run)")
    say("")
    say(f"{len(rows)} jobs, {sum(r['searches'] for r in rows)} searches.")
    say("")
    overhead_table(rows)
    kinds = {"hand-written and public datasets": [r for r in rows if "-derived/" not in r["cell"]],
             "derived datasets (up to 300 queries each)": [r for r in rows if "-derived/" in r["cell"]]}
    say("By dataset kind, median overhead (wall; CPU): " + "; ".join(
        f"the {len(rs)} jobs of {kind} {statistics.median(r['overhead'] for r in rs):.2f} s, "
        f"{statistics.median(r['cpu_overhead'] for r in rs):.2f} s" for kind, rs in kinds.items() if rs) + ".")
    say("")
    say("## S4. No-op rerun")
    say("")
    say(f"`snakemake --profile profiles/local --cores {CORES} all --configfile {SEED}` with everything done: "
        f"**{noop:.2f} s**; planning only "
        f"(`-n`): {noop_plan:.2f} s. Snakemake's own floor, a trivial Snakefile with {cold_jobs} finished jobs: "
        f"{floor:.2f} s; the matrix's no-op is **{noop / floor:.2f}x** that (issue 20: <= 1.3x): "
        f"{verdict(noop <= 1.3 * floor)}.")
    say("")
    share = profile["share"]
    say(f"Whose time it is: `snakemake -n` of the finished matrix, its main thread's stack sampled every 2 ms, "
        f"ran {profile['wall']:.2f} s; **{share:.0%}** of the samples had our code on the stack (the Snakefile "
        "and its rule files with the crmatrix modules they import, config validation, code hashes, input "
        f"functions, params), {1 - share:.0%} Snakemake's own (its start, the DAG over the {cold_jobs} jobs' "
        f"files, each output's check). Of the no-op's {noop:.2f} s: ours ≈ {share * noop:.2f} s, Snakemake's "
        f"≈ {(1 - share) * noop:.2f} s, against its floor of {floor:.2f} s for {cold_jobs} jobs of one rule "
        "without inputs.")
    say("")
    say("## S5. One added query-time arm")
    say("")
    say(f"Arm {next(iter(ADDED_ARM))} ({json.dumps(next(iter(ADDED_ARM.values())))}) added to the finished "
        f"matrix: {added:.1f} s ({added_cpu:.0f} CPU s) = **{added / cold:.1%}** of the cold run (issue 20: <= 3 %): "
        f"{verdict(added <= 0.03 * cold)}. Its jobs: "
        + ", ".join(f"`{r}` {n}" for r, n in sorted(added_jobs.items(), key=lambda kv: -kv[1])) + ".")
    say("")
    say(f"Where its time went, from its log (declared threads x seconds per rule; {added_pack['wall']:.0f} s from "
        "its first job's start to its last job's end): "
        + ", ".join(f"`{r}` {s:.0f} s" for r, s in sorted(added_pack["per_rule"].items(), key=lambda kv: -kv[1]))
        + f"; of the evaluations' time, {added_search:.1f} s is the arm's searches themselves. Outside its jobs "
        f"(Snakemake's start and planning, its end): about {added - added_pack['wall']:.0f} s (the no-op is "
        f"{noop:.1f} s).")
    say("")
    jobs_cpu = sum(r["cpu"] for r in added_clock.values())
    say(f"Whose CPU it is, each job's process timing itself (JOB_CLOCK: interpreter start to exit): of the "
        f"{added_cpu:.0f} CPU s of the added run, its jobs' processes {jobs_cpu:.0f} s (ours: the stages, their "
        f"imports and the Python start each script job needs), Snakemake's main process "
        f"{added_cpu - jobs_cpu:.0f} s (its start, planning, scheduling and each job's bookkeeping).")
    say("")
    say("| rule | jobs | process wall s | CPU s | CPU s per job |")
    say("|---|---:|---:|---:|---:|")
    for rule, r in sorted(added_clock.items(), key=lambda kv: -kv[1]["cpu"]):
        say(f"| {rule} | {r['jobs']} | {r['wall']:.1f} | {r['cpu']:.1f} | {r['cpu'] / r['jobs']:.2f} |")
    say("")
    say("## S6. Memory and embeddings")
    say("")
    say(f"Largest peak RSS: **{peak / 1024:.2f} GiB** ({who}).")
    say("")
    say(f"Texts embedded over all {SEED} indexes: **{embedded}**, for {distinct} distinct (text, model) pairs "
        f"indexed; symbols x arms (one embedding per symbol per arm, as re-indexing per arm would do): "
        f"{naive} — {embedded / naive:.2f}x of that.")
    say("")


def requests_config(ws: Path, arms: list[str], name: str) -> str:
    cfg = yaml.safe_load((ws / "config" / "config.yaml").read_text())
    cfg["corpora"] = {"requests": cfg["corpora"]["requests"]}
    cfg["datasets"] = {"requests": cfg["datasets"]["requests"]}
    cfg["systems"] = {"builtin": cfg["systems"]["builtin"]}
    cfg["arms"] = {a: cfg["arms"][a] for a in arms}
    cfg["baseline_arm"] = arms[0]
    cfg.pop("compare", None)
    cfg.pop("trackers", None)
    path = f"config/{name}.yaml"
    (ws / path).write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


def four_arms() -> None:
    ws = workspace("four")
    together = snakemake(ws, requests_config(ws, FOUR_ARMS, "four"))
    alone = []
    for arm in FOUR_ARMS:
        one = workspace(f"one-{arm}")
        alone.append(snakemake(one, requests_config(one, [arm], "one")))
    ratio = together / sum(alone)
    say("## 5. Four arms in one run vs four single-arm runs (default `requests` corpus, cold each)")
    say("")
    say("| run | s |")
    say("|---|---:|")
    for arm, s in zip(FOUR_ARMS, alone, strict=True):
        say(f"| {arm} alone | {s:.1f} |")
    say(f"| {' + '.join(FOUR_ARMS)} together | {together:.1f} |")
    say("")
    say(f"Together / sum of alone = **{ratio:.2f}x** (target <= 0.35x): {verdict(ratio <= 0.35)}.")
    say("")


# Snakemake's benchmark samples a job's CPU time every 0.5 s, so a job of a second loses what it
# spent after the last sample. Instead each job's script process reports itself when it exits:
# its rule, its CPU time (getrusage: every thread, from interpreter start) and wall time since the
# kernel started it, the CPU and wall time inside its `crmatrix.pipeline.jobs.job` block (the
# stage's own work: what is left is the job's wrapper, Python's start, imports and Snakemake's
# preamble), and an evaluate_arm job the run file it wrote. The benchmark puts this module first
# on the jobs' PYTHONPATH.
JOB_CLOCK = """
import atexit, contextlib, json, os, re, resource, sys, time

_stage = {}

def _report(rule):
    job = getattr(sys.modules["__main__"], "snakemake", None)
    if job is None:
        return
    ticks = int(open("/proc/self/stat").read().rsplit(")", 1)[1].split()[19])  # starttime, field 22
    wall = time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK")
    use = resource.getrusage(resource.RUSAGE_SELF)
    # a PID alone is reused within a long run (pid_max may be 32768 on a busy machine): with its
    # start time, each process's report has a name of its own
    out = os.path.join(os.environ["JOB_CLOCK_DIR"], f"{os.getpid()}-{ticks}.json")
    with open(out, "w") as f:
        json.dump({"rule": rule, "run": job.output.run if "run" in job.output.keys() else None,
                   "wall": wall, "cpu": use.ru_utime + use.ru_stime,
                   "stage_wall": _stage.get("wall"), "stage_cpu": _stage.get("cpu")}, f)

def _timed(job):
    @contextlib.contextmanager
    def timed(*args, **kwargs):
        with job(*args, **kwargs):
            cpu, wall = time.process_time(), time.perf_counter()
            try:
                yield
            finally:
                _stage.update(cpu=time.process_time() - cpu, wall=time.perf_counter() - wall)
    return timed

# Snakemake runs a rule's script as .snakemake/scripts/tmpXXXX.<rule>.py
_script = re.search(r"\\.(\\w+)\\.py$", sys.argv[0]) if sys.argv and sys.argv[0] else None
if _script and "JOB_CLOCK_DIR" in os.environ:
    from crmatrix.pipeline import jobs as _jobs  # the script imports it first thing anyway

    _jobs.job = _timed(_jobs.job)
    atexit.register(_report, _script.group(1))
"""


def job_clock(ws: Path) -> dict[str, str]:
    """The environment under which each evaluate_arm job of the workspace reports its clock
    (JOB_CLOCK first on its PYTHONPATH). Bytecode written and reused, as on a user's machine (a
    shell with PYTHONDONTWRITEBYTECODE=1 would have every job compile crmatrix's sources again,
    ~0.1 s of CPU each)."""
    (ws / "job-clock" / "site").mkdir(parents=True)
    (ws / "job-clock" / "site" / "sitecustomize.py").write_text(JOB_CLOCK)
    return {"PYTHONPATH": os.pathsep.join([str(ws / "job-clock" / "site"), str(ws / "src")]),
            "JOB_CLOCK_DIR": str(ws / "job-clock"), "PYTHONDONTWRITEBYTECODE": ""}


def clock_per_rule(clock_dir: Path) -> dict[str, dict]:
    """Rule -> {jobs, wall, cpu}: the JOB_CLOCK reports in `clock_dir` summed per rule."""
    out: dict[str, dict] = {}
    for clock in clock_dir.glob("*.json"):
        timing = json.loads(clock.read_text())
        r = out.setdefault(timing["rule"], {"jobs": 0, "wall": 0.0, "cpu": 0.0})
        r["jobs"] += 1
        r["wall"] += timing["wall"]
        r["cpu"] += timing["cpu"]
    return out


def overhead_rows(clock: list[dict], tsv: dict[str, dict] | None = None) -> list[dict]:
    """Per rule, over its jobs' own reports (JOB_CLOCK): CPU of the process, of its stage, and the
    rest (its wrapper), medians and sums, with Snakemake's benchmark wall time (`tsv`, from
    scaling.benchmark_tsvs) beside them."""
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


def evaluation_overhead(ws: Path) -> list[dict]:
    """Per evaluate_arm job of the workspace: its process's wall and CPU time (JOB_CLOCK), its
    queries' search time and the difference, the overhead (starting Python, loading the index,
    the query vectors, the token counter...). On a shared machine the wall time mostly measures
    the load; the CPU time is what a quiet machine's wall time would roughly be."""
    rows = []
    for clock in sorted((ws / "job-clock").glob("*.json")):
        timing = json.loads(clock.read_text())
        if timing["rule"] != "evaluate_arm":
            continue
        run = json.loads((ws / timing["run"]).read_text())
        search = sum(q["elapsed_ms"] for m in run["methods"].values() for q in m["queries"]) / 1000
        wall, cpu = timing["wall"], timing["cpu"]
        rows.append({"cell": timing["run"], "wall": wall, "cpu": cpu, "search": search, "overhead": wall - search,
                     "cpu_overhead": cpu - search, "searches": sum(len(m["queries"]) for m in run["methods"].values())})
    return rows


def default_builtin_config(ws: Path) -> str:
    """The default matrix with its builtin system only (a peer's jobs add its server's start, its
    own cost), and its `self` corpus cloned from this checkout (the workspace copy is no git repository)."""
    cfg = yaml.safe_load((ws / "config" / "config.yaml").read_text())
    cfg["systems"] = {"builtin": cfg["systems"]["builtin"]}
    cfg["corpora"]["self"]["git"] = str(ROOT)
    cfg.pop("compare", None)
    path = "config/default-builtin.yaml"
    (ws / path).write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


def overhead() -> None:
    ws = workspace("overhead")
    load = os.getloadavg()[0]
    secs = snakemake(ws, default_builtin_config(ws), env=job_clock(ws))
    rows = evaluation_overhead(ws)
    say("## 6. Evaluation overhead (the default matrix's builtin cells, cold)")
    say("")
    say(f"{len(rows)} `evaluate_arm` jobs ({sum(r['searches'] for r in rows)} searches), the matrix cold in "
        f"{secs / 60:.1f} min; load average {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end.")
    say("")
    overhead_table(rows)


def overhead_table(rows: list[dict]) -> None:
    """The per-job table of `evaluation_overhead`'s rows and the verdict on issue 22's target."""
    med = {k: statistics.median(r[k] for r in rows) for k in ("wall", "cpu", "search", "overhead", "cpu_overhead")}
    say("| per job | median s | max s |")
    say("|---|---:|---:|")
    for k, label in (("wall", "job wall time"), ("cpu", "job CPU time"), ("search", "searches (elapsed_ms summed)"),
                     ("overhead", "overhead (wall - searches)"), ("cpu_overhead", "CPU - searches")):
        say(f"| {label} | {med[k]:.2f} | {max(r[k] for r in rows):.2f} |")
    say("")
    say(f"Median overhead **{med['overhead']:.2f} s** (issue 22: <= 0.4 s on a quiet machine): "
        f"{verdict(med['overhead'] <= 0.4)}; on CPU time (about a quiet machine's wall time) "
        f"{med['cpu_overhead']:.2f} s: {verdict(med['cpu_overhead'] <= 0.4)}.")
    say("")


STAMP = re.compile(r"^\[(\w{3} \w{3} +\d+ [\d:]{8} \d{4})\]$")


def packing(log: str, cores: int = CORES) -> dict:
    """How a run's jobs filled the cores, from Snakemake's log (one-second stamps): each job's
    start, end, rule and declared threads; per second, the threads the running jobs declare.
    `occupancy`: declared threads (at most `cores`) summed over the seconds / (wall x cores);
    `short`: seconds with fewer declared threads than cores, and the rules running in them
    (what the other cores waited behind); `per_rule`: wall seconds x threads per rule."""
    jobs, stamp, current = {}, None, None
    for line in log.splitlines():
        if m := STAMP.match(line):
            stamp = datetime.datetime.strptime(m.group(1), "%a %b %d %H:%M:%S %Y").timestamp()
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


# `added-narrow`: the default matrix on these corpora (and their views) and the builtin system
# alone, every arm kept; for a machine too loaded to run the whole of it twice in an hour.
NARROW = ("requests", "repoqa-tinyqueue")


def default_config(ws: Path, narrow: bool = False) -> str:
    """The default matrix as a user runs it, its `self` corpus cloned from this checkout (the
    workspace copy is no git repository); `narrow`: on the NARROW corpora and the builtin alone."""
    cfg = yaml.safe_load((ws / "config" / "config.yaml").read_text())
    cfg["corpora"]["self"]["git"] = str(ROOT)
    if narrow:
        cfg["corpora"] = {c: conf for c, conf in cfg["corpora"].items() if c in NARROW}  # views follow
        cfg["datasets"] = {d: conf for d, conf in cfg["datasets"].items() if conf["corpus"] in NARROW}
        cfg["systems"] = {"builtin": cfg["systems"]["builtin"]}
    path = "config/default-here.yaml"
    (ws / path).write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


# The added arm of benchmarks/results/added-arm-default-2026-12-01.md: query-time knobs alone,
# auto gating left at its default.
DEFAULT_ADDED = {"sparse-t30": {"CODELENS_RANK_SPARSE_TERM_WEIGHT": "1", "CODELENS_RANK_SPARSE_THRESHOLD": "30"}}


def cold_default(rev: str | None, narrow: bool = False) -> dict:
    """The default matrix cold in a copy at `rev` (else this checkout, as it is now)."""
    ws = workspace(f"added-{rev or 'here'}", rev)
    config = default_config(ws, narrow)
    load = os.getloadavg()[0]
    cold, (out, cpu) = snakemake(ws, config, keep=True)
    log = max((ws / ".snakemake" / "log").glob("*.snakemake.log"), key=lambda p: p.stat().st_mtime)
    return {"ws": ws, "config": config, "load": load, "cold": cold, "cold_cpu": cpu,
            "cold_jobs": sum(jobs_per_rule(out).values()), "packing": packing(log.read_text())}


def measure_default(run: dict) -> None:
    """The no-op, its planning and one added query-time arm, on a finished default matrix."""
    ws, config = run["ws"], run["config"]
    run["noop"] = snakemake(ws, config)
    run["plan"] = snakemake(ws, config, "-n")
    cfg = yaml.safe_load((ws / config).read_text())
    cfg["arms"].update(DEFAULT_ADDED)
    (ws / "config" / "default-plus.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    run["added"], (out, run["added_cpu"]) = snakemake(ws, "config/default-plus.yaml", keep=True)
    run["added_jobs"] = jobs_per_rule(out)


def added_arm(rev: str | None, narrow: bool = False) -> None:
    """Both copies' cold runs side by side (they take most of the time, and each meets the
    same load so), then each measured phase alone, one copy after the other."""
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    revs = ([rev] if rev else []) + [None]  # the reference in the first column
    with concurrent.futures.ThreadPoolExecutor(len(revs)) as pool:
        runs = list(pool.map(cold_default, revs, [narrow] * len(revs)))
    for run, r in zip(runs, revs, strict=True):
        run["label"] = r or f"{commit} + edits (this checkout)"
        measure_default(run)
    floor = snakemake_floor(runs[-1]["cold_jobs"])
    loads = ", ".join(f"{r['load']:.1f}" for r in runs)
    what = f"narrowed to {', '.join(NARROW)} and the builtin system" if narrow else "whole"
    say(f"## 7. One added query-time arm on the default matrix (config/config.yaml, {what})")
    say("")
    say(f"Arm {next(iter(DEFAULT_ADDED))} ({json.dumps(next(iter(DEFAULT_ADDED.values())))}) added to the finished "
        f"default matrix; `snakemake --cores {CORES} all --configfile ...` in a copy of each revision: both cold "
        f"runs side by side, then each measured phase alone. Load average at the start: {loads}; "
        f"{os.getloadavg()[0]:.1f} at the end.")
    say("")
    say("| | " + " | ".join(r["label"] for r in runs) + " |")
    say("|---|" + "---:|" * len(runs))
    rows = [("cold run (side by side), s", lambda r: f"{r['cold']:.0f}"),
            ("cold: jobs", lambda r: str(r["cold_jobs"])),
            ("cold: CPU s of Snakemake and its jobs / (wall x cores)",
             lambda r: f"{r['cold_cpu'] / (r['cold'] * CORES):.0%}"),
            ("cold: threads the running jobs declare / (wall x cores)",
             lambda r: f"{r['packing']['occupancy']:.0%}"),
            ("cold: seconds with fewer threads declared than cores",
             lambda r: f"{r['packing']['short_s']} of {r['packing']['wall']:.0f}"),
            ("no-op rerun, s", lambda r: f"{r['noop']:.2f}"),
            ("no-op planning (`-n`), s", lambda r: f"{r['plan']:.2f}"),
            ("added arm, s", lambda r: f"{r['added']:.1f}"),
            ("added arm, CPU s", lambda r: f"{r['added_cpu']:.1f}"),
            ("added arm / cold run", lambda r: f"{r['added'] / r['cold']:.1%}"),
            ("added arm: jobs", lambda r: str(sum(r["added_jobs"].values())))]
    for name, cell in rows:
        say(f"| {name} | " + " | ".join(cell(r) for r in runs) + " |")
    for rule in sorted({k for r in runs for k in r["added_jobs"]}):
        say(f"| added arm: `{rule}` jobs | " + " | ".join(str(r["added_jobs"].get(rule, 0)) for r in runs) + " |")
    say("")
    for r in runs:
        short = sorted(r["packing"]["short"].items(), key=lambda kv: -kv[1])
        say(f"Cold run of {r['label']}: the seconds a core had no job declared on it, by the rules running "
            f"then (what the idle core waited behind): " + ", ".join(f"{rule} {n} s" for rule, n in short[:6]) + ".")
        say("")
    say(f"Snakemake's own floor: a trivial Snakefile with {runs[-1]['cold_jobs']} finished jobs reruns in "
        f"**{floor:.2f} s**; this checkout's no-op is {runs[-1]['noop'] / floor:.2f}x that (issue 20's target "
        f"<= 1.3x is stated for the seed matrix).")
    say("")

SECTIONS = {"seed": "sections S1-S6, the seed matrix", "four": "section 5, four arms vs four single-arm runs",
            "overhead": "section 6, the overhead of an evaluation",
            "added": "section 7, an added arm on the default matrix (`added REV` compares revision REV first)",
            "added-narrow": "section 7 on the default matrix narrowed to NARROW's corpora and the builtin"}


def main() -> None:
    """`pipeline.py [seed] [four] [overhead] [added [REV]] [added-narrow [REV]] [--keep]`: the sections
    to run (default: all); `--keep`: leave the workspaces (a finished seed matrix's: for
    `scaling.py --finished`), their paths printed."""
    args = sys.argv[1:]
    keep = "--keep" in args
    if keep:
        args.remove("--keep")
    rev = None
    for name in ("added", "added-narrow"):
        if name in args and args.index(name) + 1 < len(args) and args[args.index(name) + 1] not in SECTIONS:
            rev = args.pop(args.index(name) + 1)
    chosen = args or list(SECTIONS)
    if set(chosen) - set(SECTIONS):
        sys.exit(f"usage: pipeline.py [{'] ['.join(SECTIONS)}] [REV]")
    if not (ROOT.parent / "shared" / "corpora").is_dir():
        sys.exit("benchmarks/pipeline.py needs ../shared/corpora (the git mirror of the seed corpora)")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout
    say(f"# Pipeline benchmark — {TODAY}")
    say("")
    say(f"Machine: {CORES} cores, Python {platform.python_version()}; crmatrix at {commit.strip()}; "
        "every run cold in its own copy of the project and cache. The machines are noisy: read ratios "
        "within this run.")
    say("")
    try:
        if "seed" in chosen:
            seed_matrix()
        if "four" in chosen:
            four_arms()
        if "overhead" in chosen:
            overhead()
        if "added" in chosen:
            added_arm(rev)
        if "added-narrow" in chosen:
            added_arm(rev, narrow=True)
    finally:
        for ws in WORKSPACES:
            if keep:
                print(f"kept {ws}")
            else:
                shutil.rmtree(ws, ignore_errors=True)
    suffix = "" if set(chosen) == set(SECTIONS) else "-" + "-".join(chosen)
    dest = ROOT / "benchmarks" / "results" / f"pipeline-{TODAY}{suffix}.md"
    dest.write_text("\n".join(out_lines) + "\n")
    print(f"wrote {dest}")


if __name__ == "__main__":
    main()
