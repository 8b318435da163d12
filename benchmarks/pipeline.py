"""Pipeline benchmark, run by hand (not in CI): `.venv/bin/python benchmarks/pipeline.py`.

Prints, and writes to benchmarks/results/pipeline-<date>.md (and the seed matrix's phase matrix
to seed-matrix-<date>.md; -2, -3... after the date when a report of that day is there), with
their targets:
  S1-S7. (issues 20, 22 and 48, `seed`) the cold seed matrix (`config/seed-matrix.yaml`, its derived
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
import json
import os
import platform
import shutil
import sys
from pathlib import Path

import yaml
from clocks import evaluation_overhead, job_clock, overhead_table, packing
from floors import noop_and_floor
from seed_matrix import seed_matrix
from timing import (
    CORES,
    REPEATS,
    ROOT,
    TODAY,
    WORKSPACES,
    commit,
    jobs_per_rule,
    new_result,
    out_lines,
    say,
    snakemake,
    verdict,
    workspace,
)

FOUR_ARMS = ["baseline", "2e-only", "2b2c-only", "stacked"]


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
    run["noop"], run["floor"] = noop_and_floor(lambda: snakemake(ws, config), run["cold_jobs"])
    run["plan"] = snakemake(ws, config, "-n")
    cfg = yaml.safe_load((ws / config).read_text())
    cfg["arms"].update(DEFAULT_ADDED)
    (ws / "config" / "default-plus.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    run["added"], (out, run["added_cpu"]) = snakemake(ws, "config/default-plus.yaml", keep=True)
    run["added_jobs"] = jobs_per_rule(out)


def added_arm(rev: str | None, narrow: bool = False) -> None:
    """Both copies' cold runs side by side (they take most of the time, and each meets the
    same load so), then each measured phase alone, one copy after the other."""
    here = commit()
    revs = ([rev] if rev else []) + [None]  # the reference in the first column
    with concurrent.futures.ThreadPoolExecutor(len(revs)) as pool:
        runs = list(pool.map(cold_default, revs, [narrow] * len(revs)))
    for run, r in zip(runs, revs, strict=True):
        run["label"] = r or f"{here} + edits (this checkout)"
        measure_default(run)
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
    last = runs[-1]
    say(f"Snakemake's own floor: a trivial Snakefile with {last['cold_jobs']} finished jobs reruns in "
        f"**{last['floor']:.2f} s** (the fastest of {REPEATS}, in turns with the no-op's); this checkout's no-op is "
        f"{last['noop'] / last['floor']:.2f}x that (issue 20's target "
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
    say(f"# Pipeline benchmark — {TODAY}")
    say("")
    say(f"Machine: {CORES} cores, Python {platform.python_version()}; crmatrix at {commit()}; "
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
    dest = new_result(f"pipeline-{TODAY}{suffix}")
    dest.write_text("\n".join(out_lines) + "\n")
    print(f"wrote {dest}")


if __name__ == "__main__":
    main()
