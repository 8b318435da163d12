"""The report of benchmarks/scaling.py: its figures per size, the growth of each, the targets,
where planning's time goes, each job's overhead and the check of the finished state by `--touch`."""

from __future__ import annotations

import platform
import subprocess

import numpy as np
from clocks import overhead_rows
from floors import OUR_GC, TARGET_NOOP, TARGET_PLAN_S
from timing import BIN, CORES, REPEATS, TODAY, commit, say, verdict

TARGET_OVERHEAD = 0.20  # the wrappers' share of the jobs' CPU


def fit(jobs: list[int], secs: list[float]) -> tuple[float, float]:
    """(a, b) of secs ~ a * jobs^b, least squares in log-log."""
    b, log_a = np.polyfit(np.log(jobs), np.log(secs), 1)
    return float(np.exp(log_a)), float(b)


def report(results: list[dict], check: dict, start: str, end: str) -> None:
    header(start, end)
    figures(results)
    targets(results)
    planning_profile(results[-1])
    job_overhead(results[0])
    touch_section(results[0], check)


def header(start: str, end: str) -> None:
    version = subprocess.run([str(BIN / "snakemake"), "--version"], capture_output=True, text=True).stdout.strip()
    say(f"# Scaling benchmark — {TODAY}")
    say("")
    say(f"Machine: {CORES} cores, Python {platform.python_version()}, Snakemake {version}; crmatrix at {commit()}. "
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


def figures(results: list[dict]) -> None:
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
        (f"{OUR_GC} (its no-op), s",
         lambda r: f"{r['floor']['frozen']:.1f}"),
        ("no-op / that floor", lambda r: f"{r['noop'] / r['floor']['frozen']:.2f}x"),
        ("runs timed: planning; no-op; floor; floor collecting as ours does, s", lambda r: "; ".join(
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


def wrapper_share(one: dict) -> tuple[list[dict], float, float, float]:
    """The per-rule overhead rows of the run for real (`clocks.overhead_rows`), the jobs' CPU, the
    stages' CPU and the wrappers' share of the jobs'."""
    rows = overhead_rows(one["clock"], one["tsv"])
    cpu, stage = sum(r["cpu_sum"] for r in rows), sum(r["stage_sum"] for r in rows)
    return rows, cpu, stage, (cpu - stage) / cpu


def targets(results: list[dict]) -> None:
    one = results[0]
    say("## Targets")
    say("")
    for r in results:
        ratio = r["noop"] / r["floor"]["noop"]
        say(f"- {r['label']} ({r['jobs']} jobs): planning {r['plan']:.1f} s (<= {TARGET_PLAN_S:.0f} s): "
            f"{verdict(r['plan'] <= TARGET_PLAN_S)}; no-op {r['noop']:.1f} s = {ratio:.2f}x the fair floor's "
            f"{r['floor']['noop']:.1f} s (<= {TARGET_NOOP}x): {verdict(ratio <= TARGET_NOOP)}; against the floor "
            f"collecting as ours does, {r['noop'] / r['floor']['frozen']:.2f}x.")
    _, cpu, stage, share = wrapper_share(one)
    say(f"- per-job overhead (the {one['label']} run, every job): the wrapper's CPU is {share:.0%} of the jobs' CPU "
        f"(<= {TARGET_OVERHEAD:.0%}): {verdict(share <= TARGET_OVERHEAD)}; {(cpu - stage) / stage:.0%} of the "
        "stages' own CPU.")
    say("")


def planning_profile(last: dict) -> None:
    prof = last["profile"]
    say(f"## Where planning's time goes (cProfile, the {last['label']} matrix, once)")
    say("")
    say(f"`snakemake -n` under cProfile: {last['profile_wall']:.0f} s wall, {prof['total']:.1f} s profiled "
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


def job_overhead(one: dict) -> None:
    rows, cpu, stage, share = wrapper_share(one)
    say(f"## Per-job overhead (the {one['label']} matrix run for real, every job)")
    say("")
    clock_cpu = sum(c["cpu"] for c in one["clock"])
    say(f"The run: {one['finish_s']:.0f} s wall, {one['run_cpu']:.0f} CPU s (Snakemake and its jobs, /usr/bin/time); "
        f"its {len(one['clock'])} jobs' processes {clock_cpu:.0f} CPU s, each reporting itself at exit "
        "(clocks.py's JOB_CLOCK: getrusage from the interpreter's start, and the CPU inside its "
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


def touch_section(one: dict, check: dict) -> None:
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
