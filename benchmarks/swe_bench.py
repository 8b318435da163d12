"""SWE-bench localization at full size, run by hand (not in CI):

    make run CONFIG=config/swe-bench.yaml           # in a clean clone, cold
    .venv/bin/python benchmarks/swe_bench.py CLONE [--note TEXT] [--out FILE | --write]

reads the finished run in CLONE and prints its report; `--out FILE` writes it to FILE too,
`--write` to benchmarks/results/swe-bench-<date>-clean.md (a tracked file). It says what run it
read: from the clone's Snakemake logs, the commands that ran jobs, their wall time, and "cold"
only when one command alone ran jobs, every one it planned (else "not cold"). With
`--run`, it makes the cold run in CLONE itself first (the clone's venv installed untimed, then the
run's Snakemake command as `make run` gives it), each job's process reporting its CPU (clocks.py's
JOB_CLOCK): the report then holds the per-job overhead (issue 29: <= 20 % of the CPU), the jobs'
wrappers and Snakemake's main process against the stages' own work, and the run's CPU against
its work floor (work_floor.py: issue 48, <= 1.5x). The report: the run's wall
time; CPU seconds per rule (from the jobs' benchmark files); per stage the share served from a
cache (symbols: the previous store and the per-file symbol cache; embeddings: the previous
index and the embedding cache) beside each repository's commits, file instances and distinct
files; and per benchmark (Lite, Verified: every task of the nine repositories, micro-averaged
as the field reports them; swerank-lite: Lite's tasks that edit a function, SweRank's protocol,
where swerank-bm25 is SweRank's BM25; lite-all: Lite over every .py file, for comparison), under
the candidate rule its repositories' stores name, each method's file Acc@1/3/5/10 (SweRank's,
then LocAgent's), recall@10, nDCG@10 and MRR with 95 % bootstrap intervals, the BM25 protocols'
Acc@5 per repository, each other arm's MRR against the baseline's on the same tasks (paired), and
the published figures.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import finished_run
import numpy as np
import paired
import timing
from clocks import cpu_by_rule, job_clock, job_reports, overhead_rows
from work_floor import floor_lines

from crmatrix.analysis import stats
from crmatrix.evaluation import metrics

METRICS = ("acc_all@1", "acc_all@3", "acc_all@5", "acc_all@10", "recall@10", "ndcg@10", "mrr")
LOCAGENT = ("acc_locagent@1", "acc_locagent@3", "acc_locagent@5", "acc_locagent@10")
# the per-repository table: the three BM25 protocols (symbols, whole files, SweRank's) and the headline
PER_REPOSITORY = ("bm25", "file-bm25", "swerank-bm25", "hybrid")
# Published file-level figures on subsets of the same benchmarks (percent for SweRank's Acc@k).
PUBLISHED = [
    ("SweRank Table 1, Lite (274 tasks), BM25", {"acc_all@1": 0.3869, "acc_all@3": 0.5182, "acc_all@5": 0.6168}),
    ("SweRank Table 1, Lite (274 tasks), CodeRankEmbed", {"acc_all@1": 0.5255, "acc_all@3": 0.7774,
                                                         "acc_all@5": 0.8467}),
    ("SweRank Table 1, Lite (274 tasks), SweRankEmbed-Small", {"acc_all@1": 0.6642, "acc_all@3": 0.8650,
                                                              "acc_all@5": 0.9088}),
    # its abstract's "up to 92.7 %" file level, its Acc@k at k = 5 (on Lite, one gold file a task: SweRank's too)
    ("LocAgent (Chen et al. 2025, arXiv 2503.09089), Lite (300 tasks), its fine-tuned Qwen2.5-Coder-32B agent",
     {"acc_all@5": 0.927}),
    ("MTEB SWEbenchCodeRetrieval, Verified (500 tasks, files as documents), all-MiniLM-L6-v2",
     {"ndcg@10": 0.0376, "recall@10": 0.0765}),
]


def scored(rows: list[dict], names: tuple[str, ...] = METRICS) -> dict[str, str]:
    """Each metric's mean over the rows with its 95 % bootstrap interval."""
    out = {}
    for m in names:
        values = metrics.per_query(rows, m)
        low, high = stats.bootstrap_ci(values)
        out[m] = f"{float(np.mean(values)):.3f} [{low:.2f}, {high:.2f}]"
    return out


# Each benchmark by its datasets' prefix (a dataset's the longest that starts it): its section's title.
BENCHMARKS = {"lite": "Lite", "verified": "Verified",
              "swerank-lite": "SweRank's protocol (Lite's tasks that edit a function; swerank-bm25 its BM25)",
              "lite-all": "Lite over every .py file, tests too (for comparison)"}


def benchmark_of(dataset: str) -> str | None:
    """The benchmark whose split `dataset` is (`lite-all-flask`: lite-all, not lite)."""
    return max((b for b in BENCHMARKS if dataset.startswith(f"{b}-")), key=len, default=None)

TARGET_OVERHEAD = 0.20
CONFIG = "config/swe-bench.yaml"


def cold_run(clone: Path) -> None:
    """The cold run in `clone` under JOB_CLOCK, its wall and its CPU (Snakemake and every job)
    written to CLONE/job-clock/run.json."""
    if (clone / "results").exists():
        sys.exit(f"{clone}/results exists: --run makes a cold run, in a clean clone")
    subprocess.run(["make", ".venv/.installed"], cwd=clone, check=True)
    wall, (_, cpu) = timing.snakemake(clone, CONFIG, keep=True, env=job_clock(clone),
                                        venv_bin=clone / ".venv" / "bin")
    (clone / "job-clock" / "run.json").write_text(json.dumps({"wall": wall, "cpu": cpu}))


def overhead_lines(clone: Path, jobs: int) -> list[str]:
    """The per-job overhead of a run made by `--run`: per rule, its jobs' CPU (each process's own
    report), their stages' and the rest (the wrapper: Python's start, imports, Snakemake's
    preamble); Snakemake's main process is the run's CPU less its jobs'."""
    clocks = job_reports(clone / "job-clock")
    run = json.loads((clone / "job-clock" / "run.json").read_text())
    lines = ["## Per-job overhead (issue 29: <= 20 % of the CPU)", "",
             "Each job's process reports its CPU at exit (clocks.py's JOB_CLOCK: getrusage from the "
             "interpreter's start) and the CPU inside its `crmatrix.pipeline.jobs.job` block (the stage's own "
             "work). Wrapper = job CPU - stage CPU; the rest of the run's CPU (/usr/bin/time's of its "
             "command) is Snakemake's main process and the processes the jobs started (git's cat-file, which a "
             "job's own rusage does not count): an upper bound on Snakemake's part.", "",
             "| rule | jobs | job CPU s | stage CPU s | wrapper CPU s | wrapper / job CPU |",
             "|---|---:|---:|---:|---:|---:|"]
    rows = overhead_rows(clocks)
    for r in sorted(rows, key=lambda r: -r["cpu_sum"]):
        lines.append(f"| {r['rule']} | {r['jobs']} | {r['cpu_sum']:.1f} | {r['stage_sum']:.1f} | "
                     f"{r['cpu_sum'] - r['stage_sum']:.1f} | {r['share']:.1%} |")
    cpu, stage = sum(r["cpu_sum"] for r in rows), sum(r["stage_sum"] for r in rows)
    main = run["cpu"] - cpu
    lines.append(f"| all | {len(clocks)} | {cpu:.0f} | {stage:.0f} | {cpu - stage:.0f} | {(cpu - stage) / cpu:.1%} |")
    share = (run["cpu"] - stage) / run["cpu"]
    lines += ["", f"The run's Snakemake command: {run['wall'] / 60:.1f} min wall, {run['cpu']:.0f} CPU s; its "
              f"{len(clocks)} job processes (of {jobs} jobs; `all` runs none) {cpu:.0f} CPU s, the rest (Snakemake's "
              f"main process, the jobs' git) {main:.0f} CPU s ({main / max(jobs, 1):.2f} s per job).", "",
              f"**Per-job overhead: {share:.1%} of the run's CPU** at most (the jobs' wrappers and the rest, "
              f"{run['cpu'] - stage:.0f} of {run['cpu']:.0f} CPU s; <= {TARGET_OVERHEAD:.0%}: "
              f"{timing.verdict(share <= TARGET_OVERHEAD)}). The jobs' wrappers alone: {(cpu - stage) / cpu:.1%} "
              "of the jobs' CPU.", ""]
    return lines


def arguments() -> argparse.Namespace:
    parser = finished_run.parser("swe_bench.py", __doc__, "swe-bench")
    parser.add_argument("--run", action="store_true", help="make the cold run in CLONE first (under JOB_CLOCK)")
    args = parser.parse_args()
    args.clone = args.clone.resolve()
    return args


def cache_lines(results: Path) -> list[str]:
    """Per repository, what its symbol and index stages took from a cache."""
    lines = ["## What each stage took from a cache", "",
             "Symbols: the previous store of the repository (`crmatrix.versions.bases`: none in a cold run) and the "
             "per-file symbol cache (a file's blob parsed once, ever); embeddings: the previous index of the same key "
             "and the embedding cache (a text embedded once, ever), over each repository's index keys.", "",
             "| repository | commits | file instances | distinct files | from the previous store | parsed | "
             "from the symbol cache | texts embedded | from the embedding cache | from the previous index |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for cache_file in sorted((results / "symbols").glob("*.cache.json")):
        repo = cache_file.name.removesuffix(".cache.json")
        extracted = json.loads(cache_file.read_text())
        commits = json.loads((results / "repos" / repo / "manifest.json").read_text())["commits"]
        embedded = cached = reused = 0
        for meta in sorted((results / "index" / repo).glob("*/*/*/meta.json")):
            e = json.loads(meta.read_text())["embedding"]
            embedded, cached, reused = embedded + e["embedded"], cached + e["cached"], reused + e["reused"]
        lines.append(f"| {repo} | {commits} | {extracted['files']:,} | {extracted['distinct']:,} | "
                     f"{extracted['base']:,} | {extracted['parsed']:,} | {extracted['cached']:,} | {embedded:,} | "
                     f"{cached:,} | {reused:,} |")
    return lines


def benchmark_lines(results: Path) -> list[str]:
    """Per benchmark (Lite, Verified, swerank-lite), every method of the baseline arm pooled over its
    repositories (SweRank's Acc@k, then LocAgent's), per repository the BM25 protocols' and hybrid's
    Acc@5, then every other arm against the baseline."""
    lines = []
    runs = [json.loads(p.read_text()) for p in sorted((results / "runs").glob("*/*/*.json"))]
    for bench, title in BENCHMARKS.items():
        ours = [r for r in runs if benchmark_of(r["dataset"]) == bench]
        mine = [r for r in ours if r["arm"] == "baseline"]
        if not mine:
            continue
        methods = list(mine[0]["methods"])
        n = sum(len(r["methods"][methods[0]]["queries"]) for r in mine)
        rules = sorted({r["provenance"]["corpus"]["pin"].get("candidates", "all") for r in mine})
        lines += ["", f"## {title}: {n} tasks of {len(mine)} repositories, baseline arm, candidates "
                  + ", ".join(f"`{rule}`" for rule in rules), "",
                  "Micro-averaged over every task (as the field reports), 95 % bootstrap intervals; a file ranks "
                  "at its first hit (symbol methods) or is itself the document (file-bm25, file-semantic); "
                  "acc_all@k is SweRank's Acc@k (every gold file in the top k).", ""]
        lines += _method_table(mine, methods, METRICS)
        multi = sum(q["n_relevant"] > 1 for r in mine for q in r["methods"][methods[0]]["queries"])
        lines += ["", "LocAgent's `acc_at_k` (min(|gold|, k) gold files in the top k; looser than SweRank's where "
                  f"a task edits more files than k: {multi} of these {n} tasks edit two or more):", ""]
        lines += _method_table(mine, methods, LOCAGENT)
        shown = [m for m in PER_REPOSITORY if m in methods]
        lines += ["", f"Per repository ({', '.join(shown)}; Acc@5):", "",
                  "| dataset | tasks | " + " | ".join(shown) + " |", "|---|---:|" + "---:|" * len(shown)]
        for r in mine:
            cells = [scored(r["methods"][m]["queries"], ("acc_all@5",))["acc_all@5"] for m in shown]
            lines.append(f"| {r['dataset']} | {len(r['methods'][methods[0]]['queries'])} | " + " | ".join(cells) + " |")
        lines += arm_lines(mine, ours, methods)
    return lines


def _method_table(runs: list[dict], methods: list[str], names: tuple[str, ...]) -> list[str]:
    lines = ["| method | " + " | ".join(names) + " |", "|---|" + "---:|" * len(names)]
    for method in methods:
        got = scored([q for r in runs for q in r["methods"][method]["queries"]], names)
        lines.append(f"| {method} | " + " | ".join(got[m] for m in names) + " |")
    return lines


def arm_lines(baseline: list[dict], runs: list[dict], methods: list[str]) -> list[str]:
    """Each other arm against the baseline on the same tasks, pooled: MRR's paired difference with
    its 95 % bootstrap interval, per method (an arm that has not run on every dataset is left out)."""
    datasets = {r["dataset"] for r in baseline}
    arms = sorted({r["arm"] for r in runs} - {"baseline"})
    arms = [a for a in arms if {r["dataset"] for r in runs if r["arm"] == a} == datasets]
    if not arms:
        return []
    lines = ["", "Each arm against the baseline, the same tasks paired: MRR Δ (arm − baseline) with its 95 % "
             "bootstrap interval, pooled over the repositories:", "",
             "| arm | " + " | ".join(methods) + " |", "|---|" + "---:|" * len(methods)]
    for arm in arms:
        theirs = [r for r in runs if r["arm"] == arm]
        lines.append(f"| {arm} | " + " | ".join(paired.cell(paired.delta(baseline, theirs, m)) for m in methods) + " |")
    return lines


def main() -> None:
    args = arguments()
    clone = args.clone
    if args.run:
        cold_run(clone)
    lines = finished_run.run_lines(clone, args.note, "SWE-bench localization", CONFIG)
    lines += ["## Where the time goes (CPU seconds per rule, from each job's benchmark file)", "",
              "| rule | jobs | wall s | CPU s | CPU s per job |", "|---|---:|---:|---:|---:|"]
    by_rule = cpu_by_rule(clone)
    for rule, (n, w, cpu) in by_rule.items():
        lines.append(f"| {rule} | {n} | {w:.0f} | {cpu:.0f} | {cpu / n:.1f} |")
    total = sum(c for _, _, c in by_rule.values())
    lines += ["", f"Jobs' CPU in all: {total:.0f} s over {sum(n for n, _, _ in by_rule.values())} jobs.", ""]
    if (clone / "job-clock" / "run.json").exists():
        lines += overhead_lines(clone, finished_run.history(clone).jobs)
        run_cpu = json.loads((clone / "job-clock" / "run.json").read_text())["cpu"]
        lines += ["## The cold run against its work floor (issue 48)", "",
                  *floor_lines(clone, CONFIG, run_cpu=run_cpu, heading="###"), ""]
    lines += cache_lines(clone / "results") + benchmark_lines(clone / "results")
    lines += ["", "## Published figures (other subsets; comparable in kind, not in value)", "",
              "| source | " + " | ".join(METRICS[:6]) + " |", "|---|" + "---:|" * 6]
    for source, values in PUBLISHED:
        lines.append(f"| {source} | " + " | ".join(f"{values[m]:.3f}" if m in values else "—"
                                                    for m in METRICS[:6]) + " |")
    finished_run.emit(lines, args.out, args.write, "swe-bench")


if __name__ == "__main__":
    main()
