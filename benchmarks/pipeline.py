"""Pipeline benchmark, run by hand (not in CI): `.venv/bin/python benchmarks/pipeline.py`.

Prints, and writes to benchmarks/results/pipeline-<date>.md (and the seed matrix's phase matrix
to seed-matrix-<date>.md), with the targets of issue 11:
  1. the cold seed matrix (`config/seed-matrix.yaml`: empty results, empty embedding cache,
     models exported on the way) on this machine's cores (target <= 10 min on 2 cores);
  2. its no-op rerun (target <= 2 s), beside Snakemake's own floor (a one-rule Snakefile);
  3. one added query-time arm after it (target <= 5 % of the cold run);
  4. the largest job's peak RSS, and embeddings computed vs symbols x arms (what re-embedding
     per arm, as the seed did by hand, would have cost);
  5. four arms cold in one run vs four single-arm cold runs on the default `requests` corpus
     (target <= 0.35x);
  6. (issue Evidence) what an evaluation costs beyond its searches, over the default matrix's builtin cells:
     each `evaluate_arm` process's wall and CPU time (reported by the process itself, JOB_CLOCK)
     minus its queries' search time (the run's per-query elapsed_ms summed), median over the jobs
     (target <= 0.4 s on a quiet machine, so that 300 queries and 20+ arms multiply searches, not loading).

Each run happens in its own copy of the project beside it (so ../shared resolves) with its own
cache directory: cold means cold. Needs ../shared (the git mirror of the seed corpora).
"""

from __future__ import annotations

import csv
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from crmatrix.pipeline import config

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
SEED = "config/seed-matrix.yaml"
FOUR_ARMS = ["baseline", "2e-only", "2b2c-only", "stacked"]
ADDED_ARM = {"rrf-k30": {"CODELENS_EMBED_HINT_AUTO": "0", "CRMATRIX_FUSION": "rrf", "CRMATRIX_RRF_K": "30"}}
CORES = os.cpu_count() or 2
out_lines: list[str] = []


def say(line: str = "") -> None:
    print(line, flush=True)
    out_lines.append(line)


WORKSPACES: list[Path] = []


def workspace(name: str) -> Path:
    """A copy of the project's tracked files, beside the project so ../shared resolves."""
    dest = Path(tempfile.mkdtemp(prefix=f"crmatrix-bench-{name}-", dir=ROOT.parent))
    WORKSPACES.append(dest)
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split("\0")
    for rel in filter(None, files):
        if (ROOT / rel).is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, dest / rel)
    return dest


def snakemake(ws: Path, config: str, *flags: str, env: dict[str, str] | None = None) -> float:
    """Seconds of one `snakemake --cores N all --configfile CONFIG` in the workspace (`env`: more variables)."""
    env = {**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "CRMATRIX_CACHE_DIR": str(ws / "cache"), **(env or {})}
    t0 = time.perf_counter()
    proc = subprocess.run([str(BIN / "snakemake"), "--cores", str(CORES), "all", "--configfile", config, *flags],
                          cwd=ws, env=env, capture_output=True, text=True, timeout=3 * 3600)
    secs = time.perf_counter() - t0
    if proc.returncode:
        sys.exit(f"snakemake failed in {ws}:\n{proc.stderr[-3000:]}")
    return secs


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


def snakemake_floor() -> float:
    trivial = workspace("trivial")
    (trivial / "Snakefile").write_text("rule all:\n    input: []\n")
    t0 = time.perf_counter()
    subprocess.run([str(BIN / "snakemake"), "--cores", str(CORES)], cwd=trivial, capture_output=True, check=True)
    return time.perf_counter() - t0


def verdict(ok: bool) -> str:
    return "met" if ok else "NOT met"


def seed_matrix() -> None:
    ws = workspace("seed")
    cold = snakemake(ws, SEED)
    # the seed matrix itself, to read the arms from (issue 10's fusion verdict is read there)
    shutil.copy2(ws / "results" / "matrix" / "phase-matrix.md",
                 ROOT / "benchmarks" / "results" / f"seed-matrix-{datetime.date.today().isoformat()}.md")
    jobs = sum(1 for _ in (ws / "results" / "runs").rglob("*.json"))
    noop = snakemake(ws, SEED)
    noop_plan = snakemake(ws, SEED, "-n")
    floor = snakemake_floor()
    arms = len(config.load(ws / SEED)["arms"])  # sweep cells included
    cfg = yaml.safe_load((ws / SEED).read_text())
    cfg["arms"].update(ADDED_ARM)
    (ws / "config" / "seed-plus.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    added = snakemake(ws, "config/seed-plus.yaml")
    peak, who, per_rule = job_stats(ws)
    embedded, naive, distinct = embedding_counts(ws, SEED)
    total_rule_s = sum(per_rule.values())
    say(f"## 1. The cold seed matrix ({SEED}, {CORES} cores)")
    say("")
    say(f"{len(cfg['corpora'])} corpora, {len(cfg['datasets'])} datasets, {arms} arms; "
        f"{jobs} run files. Wall time **{cold / 60:.1f} min** (target <= 10 min): {verdict(cold <= 600)}.")
    say("")
    say("Job seconds per rule (summed over its jobs; jobs overlap on the cores):")
    say("")
    say("| rule | s | share |")
    say("|---|---:|---:|")
    for rule, s in sorted(per_rule.items(), key=lambda kv: -kv[1]):
        say(f"| {rule} | {s:.0f} | {s / total_rule_s:.0%} |")
    say("")
    say("## 2. No-op rerun")
    say("")
    say(f"`snakemake --cores {CORES} all --configfile {SEED}` with everything done: **{noop:.2f} s** "
        f"(target <= 2 s): {verdict(noop <= 2)}; planning only (`-n`): {noop_plan:.2f} s. "
        f"Snakemake's own floor here, a one-rule Snakefile with nothing to do: {floor:.2f} s.")
    say("")
    say("## 3. One added query-time arm")
    say("")
    say(f"Arm {next(iter(ADDED_ARM))} ({json.dumps(next(iter(ADDED_ARM.values())))}) added to the finished "
        f"matrix: {added:.1f} s = **{added / cold:.1%}** of the cold run (target <= 5 %): "
        f"{verdict(added <= 0.05 * cold)}.")
    say("")
    say("## 4. Memory and embeddings")
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
# spent after the last sample. Instead each evaluate_arm process reports itself when it exits: its
# CPU time (getrusage: every thread, from interpreter start) and wall time since the kernel started
# it, beside the run file its job wrote. The benchmark puts this module first on the jobs' PYTHONPATH.
JOB_CLOCK = """
import atexit, json, os, resource, sys, time

def _report():
    job = getattr(sys.modules["__main__"], "snakemake", None)
    if job is None or "run" not in job.output.keys():
        return
    ticks = int(open("/proc/self/stat").read().rsplit(")", 1)[1].split()[19])  # starttime, field 22
    wall = time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK")
    use = resource.getrusage(resource.RUSAGE_SELF)
    out = os.path.join(os.environ["JOB_CLOCK_DIR"], f"{os.getpid()}.json")
    with open(out, "w") as f:
        json.dump({"run": job.output.run, "wall": wall, "cpu": use.ru_utime + use.ru_stime}, f)

if sys.argv and sys.argv[0].endswith(".evaluate_arm.py"):
    atexit.register(_report)
"""


def evaluation_overhead(ws: Path) -> list[dict]:
    """Per evaluate_arm job of the workspace: its process's wall and CPU time (JOB_CLOCK), its
    queries' search time and the difference, the overhead (starting Python, loading the index,
    the query vectors, the token counter...). On a shared machine the wall time mostly measures
    the load; the CPU time is what a quiet machine's wall time would roughly be."""
    rows = []
    for clock in sorted((ws / "job-clock").glob("*.json")):
        timing = json.loads(clock.read_text())
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
    (ws / "job-clock" / "site").mkdir(parents=True)
    (ws / "job-clock" / "site" / "sitecustomize.py").write_text(JOB_CLOCK)
    load = os.getloadavg()[0]
    path = os.pathsep.join(filter(None, [str(ws / "job-clock" / "site"), os.environ.get("PYTHONPATH")]))
    # bytecode written and reused, as on a user's machine (a shell with PYTHONDONTWRITEBYTECODE=1
    # would have every job compile crmatrix's sources again, ~0.1 s of CPU each)
    secs = snakemake(ws, default_builtin_config(ws), env={"PYTHONPATH": path, "JOB_CLOCK_DIR": str(ws / "job-clock"),
                                                          "PYTHONDONTWRITEBYTECODE": ""})
    rows = evaluation_overhead(ws)
    med = {k: statistics.median(r[k] for r in rows) for k in ("wall", "cpu", "search", "overhead", "cpu_overhead")}
    say("## 6. Evaluation overhead (the default matrix's builtin cells, cold)")
    say("")
    say(f"{len(rows)} `evaluate_arm` jobs ({sum(r['searches'] for r in rows)} searches), the matrix cold in "
        f"{secs / 60:.1f} min; load average {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end.")
    say("")
    say("| per job | median s | max s |")
    say("|---|---:|---:|")
    for k, label in (("wall", "job wall time"), ("cpu", "job CPU time"), ("search", "searches (elapsed_ms summed)"),
                     ("overhead", "overhead (wall - searches)"), ("cpu_overhead", "CPU - searches")):
        say(f"| {label} | {med[k]:.2f} | {max(r[k] for r in rows):.2f} |")
    say("")
    say(f"Median overhead **{med['overhead']:.2f} s** (target <= 0.4 s on a quiet machine): "
        f"{verdict(med['overhead'] <= 0.4)}; on CPU time (about a quiet machine's wall time) "
        f"{med['cpu_overhead']:.2f} s: {verdict(med['cpu_overhead'] <= 0.4)}.")
    say("")


SECTIONS = {"seed": "sections 1-4, the seed matrix", "four": "section 5, four arms vs four single-arm runs",
            "overhead": "section 6, the overhead of an evaluation"}


def main() -> None:
    """`pipeline.py [seed] [four] [overhead]`: the sections to run (default: all)."""
    chosen = sys.argv[1:] or list(SECTIONS)
    if set(chosen) - set(SECTIONS):
        sys.exit(f"usage: pipeline.py [{'] ['.join(SECTIONS)}]")
    if not (ROOT.parent / "shared" / "corpora").is_dir():
        sys.exit("benchmarks/pipeline.py needs ../shared/corpora (the git mirror of the seed corpora)")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout
    say(f"# Pipeline benchmark — {datetime.date.today().isoformat()}")
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
    finally:
        for ws in WORKSPACES:
            shutil.rmtree(ws, ignore_errors=True)
    suffix = "" if set(chosen) == set(SECTIONS) else "-" + "-".join(chosen)
    dest = ROOT / "benchmarks" / "results" / f"pipeline-{datetime.date.today().isoformat()}{suffix}.md"
    dest.write_text("\n".join(out_lines) + "\n")
    print(f"wrote {dest}")


if __name__ == "__main__":
    main()
