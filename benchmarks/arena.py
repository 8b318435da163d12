"""The arena's figures (issue 19), run by hand (not in CI):

    make run CONFIG=config/arena.yaml              # in a clean clone, cold
    .venv/bin/python benchmarks/arena.py CLONE [--note TEXT]

reads the finished run in CLONE and writes benchmarks/results/arena-<date>-clean.md: the run's
wall time from its Snakemake log, each tool's install, index and evaluation job seconds, and per
system (in leaderboard order, `crmatrix.analysis.versus.compare` on the baseline arm's runs as
the charts draw them) its datasets, queries, macro MRR, pooled Δ against the reference system,
failures, and search latency p50/p95. `--note`: a line about the machine (its load).
"""

from __future__ import annotations

import csv
import datetime
import json
from pathlib import Path

import finished_run
import timing

from crmatrix import config
from crmatrix.analysis import versus
from crmatrix.evaluation import metrics


def rule_seconds(clone: Path, rule: str) -> dict[str, float]:
    """Job seconds of a rule's jobs per system (the benchmark file's path names the system)."""
    out: dict[str, float] = {}
    for tsv in sorted((clone / "logs" / "benchmarks" / rule).rglob("*.tsv")):
        parts = tsv.relative_to(clone / "logs" / "benchmarks" / rule).parts
        system = parts[0] if rule == "install_system" else parts[1]
        with tsv.open() as f:
            out[system] = out.get(system, 0.0) + sum(float(row["s"]) for row in csv.DictReader(f, delimiter="\t"))
    return out


def main() -> None:
    clone, note = finished_run.arguments("arena.py")
    m = config.load(clone / "config" / "arena.yaml")
    base, reference, preferred = m.baseline_arm, m.reference_system, m.headline_method
    runs = [json.loads(p.read_text()) for p in sorted((clone / "results" / "runs").glob(f"*/*/{base}.json"))]
    comparison = versus.compare(runs, reference, preferred)
    by = versus.rows_by_system(runs, preferred)
    commit = timing.commit(clone)
    wall, jobs = finished_run.wall_time(clone)
    installs = rule_seconds(clone, "install_system")
    indexes = rule_seconds(clone, "build_system_index") | rule_seconds(clone, "build_index")  # a tool's, the builtin's
    evaluations = rule_seconds(clone, "evaluate_arm")
    lines = [f"# The arena, from a clean clone — {datetime.date.today().isoformat()}", "",
             f"`make run CONFIG=config/arena.yaml` in a clean clone of crmatrix at {commit}, cold (empty "
             f"`results/`: every tool installed from PyPI by the workflow), {len(comparison['datasets'])} datasets, "
             f"{len(comparison['systems'])} systems, arm `{base}`. {note}".rstrip(), "",
             f"Snakemake wall time of the run: **{wall / 60:.1f} min** for {jobs} jobs (from its log's first to "
             "last time stamp; `make run`'s venv install and report come on top).", "",
             "## Per system, in leaderboard order", "",
             f"MRR of the headline method; pooled Δ against `{reference}` on the queries both answered (random "
             "effects over the datasets); latency: the search call per query (a CLI tool's includes its process "
             "start); job seconds summed over the system's jobs (—: none; the builtin's `bm25` and `lexical` "
             "build no index job, and it installs nothing).", "",
             "| system | datasets | queries | macro MRR | pooled Δ MRR [95 % CI] | failed | p50 ms | p95 ms "
             "| install s | index s | evaluation s |",
             "|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|"]
    pooled = {v["system"]: v for v in comparison["versus"]}
    for system in comparison["systems"]:
        scores = [s for s in comparison["scores"] if s["system"] == system]
        lat = metrics.latency([q["elapsed_ms"] for q in by[system]])
        v = pooled.get(system)
        delta = ("reference" if system == reference else "—" if not v or not v["pooled"] else
                 f"{v['pooled']['estimate']:+.3f} [{v['pooled']['ci_low']:+.3f}, {v['pooled']['ci_high']:+.3f}]")
        lines.append(f"| {system} | {len(scores)} | {sum(s['n'] for s in scores)} | "
                     f"{sum(s['mean'] for s in scores) / len(scores):.3f} | {delta} | "
                     f"{sum(s['failed'] for s in scores)} | {lat['p50']:.1f} | {lat['p95']:.1f} | "
                     + " | ".join("—" if system not in secs else f"{secs[system]:.0f}"
                                  for secs in (installs, indexes, evaluations)) + " |")
    lines += ["", "## Per dataset (MRR; failed queries in brackets)", "",
              "| dataset | " + " | ".join(comparison["systems"]) + " |",
              "|---|" + "---:|" * len(comparison["systems"])]
    cell = {(s["dataset"], s["system"]): s for s in comparison["scores"]}
    for d in comparison["datasets"]:
        lines.append(f"| {d} | " + " | ".join(
            "—" if (d, s) not in cell else f"{cell[(d, s)]['mean']:.3f}"
            + (f" ({cell[(d, s)]['failed']})" if cell[(d, s)]["failed"] else "") for s in comparison["systems"]) + " |")
    finished_run.write("arena", lines)


if __name__ == "__main__":
    main()
