"""Section S1-S6 of benchmarks/pipeline.py (`pipeline.py seed`, issues 20 and 22): the cold seed
matrix with its derived datasets, its core utilisation, each language's pooled MDE, each
evaluation's overhead, its no-op against Snakemake's floor, one added query-time arm, peak
memory and embeddings."""

from __future__ import annotations

import csv
import json
import shutil
import statistics
from pathlib import Path

import yaml
from clocks import clock_per_rule, evaluation_overhead, job_clock, overhead_table, packing, plan_profile
from floors import noop_and_floor
from timing import (
    CORES,
    REPEATS,
    TODAY,
    LoadSampler,
    jobs_per_rule,
    new_result,
    say,
    snakemake,
    verdict,
    workspace,
)
from work_floor import floor_lines

from crmatrix import config

SEED = "config/seed-matrix.yaml"
ADDED_ARM = {"rrf-k30": {"CODELENS_EMBED_HINT_AUTO": "0", "CRMATRIX_FUSION": "rrf", "CRMATRIX_RRF_K": "30"}}


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

def language_power(ws: Path) -> list[dict]:
    """The builtin's pooled groups per language from the matrix's `power` block."""
    power = json.loads((ws / "results" / "matrix" / "phase-matrix.json").read_text())["power"]
    return [g for g in power["groups"] if g["kind"] == "language" and g["system"] == "builtin"]

def seed_matrix() -> None:
    """Issues 20 and 22 on the seed matrix (its derived datasets included), one cold run: wall
    time, core utilisation and what the idle cores waited behind, each evaluation's overhead,
    each language's pooled MDE; then the no-op against a trivial Snakefile with as many finished
    jobs, and one added query-time arm."""
    m = measure()
    s1_cold_run(m)
    s2_languages(m)
    s3_overhead(m)
    s4_noop(m)
    s5_added_arm(m)
    s6_memory(m)
    say("## S7. The cold run against its work floor (issue 48)")
    say("")
    for line in m["work_floor"]:
        say(line)
    say("")


def measure() -> dict:
    """The seed matrix cold, its no-op, its floor and its added arm, each figure by name."""
    ws = workspace("seed")
    env = job_clock(ws)
    with LoadSampler() as load:
        cold, (out, cpu) = snakemake(ws, SEED, keep=True, env=env)
    log = max((ws / ".snakemake" / "log").glob("*.snakemake.log"), key=lambda p: p.stat().st_mtime)
    pack = packing(log.read_text())
    cold_jobs = sum(jobs_per_rule(out).values())
    shutil.copy2(ws / "results" / "matrix" / "phase-matrix.md",
                 new_result(f"seed-matrix-{TODAY}"))
    rows = evaluation_overhead(ws)
    warm_log = ws / "logs" / "warm-server.log"  # the light jobs' starts (crmatrix.pipeline.warm)
    warm = warm_log.read_text().strip().splitlines()[-1] if warm_log.exists() else "no warm server"
    work_floor = floor_lines(ws, SEED, run_cpu=cpu, heading="###")  # before the added arm adds to the run
    languages = language_power(ws)
    noop, floor = noop_and_floor(lambda: snakemake(ws, SEED, env=env), cold_jobs)
    noop_plan = snakemake(ws, SEED, "-n", env=env)
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
    return {"pack": pack, "cold_jobs": cold_jobs, "cfg": cfg, "arms": arms, "queries": queries, "load": load,
            "per_rule": per_rule, "cold": cold, "cpu": cpu, "languages": languages, "rows": rows, "noop": noop,
            "noop_plan": noop_plan, "floor": floor, "profile": profile, "added_clock": added_clock,
            "added_jobs": added_jobs, "added_pack": added_pack, "added_search": added_search, "added": added,
            "added_cpu": added_cpu, "peak": peak, "who": who, "embedded": embedded, "naive": naive,
            "distinct": distinct, "work_floor": work_floor, "warm": warm}


def s1_cold_run(m: dict) -> None:
    """S1: the cold run's wall time, core utilisation and job seconds per rule."""
    pack, cold_jobs, cfg, arms, queries, load, per_rule, cold, cpu = (
        m["pack"], m["cold_jobs"], m["cfg"], m["arms"], m["queries"], m["load"], m["per_rule"], m["cold"], m["cpu"])
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


def s2_languages(m: dict) -> None:
    """S2: what the matrix can tell per language."""
    languages = m["languages"]
    say("## S2. What the matrix can tell, per language (builtin, pooled random effects over the plain datasets)")
    say("")
    say("| language | datasets | queries | pooled MDE (median over the arms moving 10 % of its queries) | <= 0.03 |")
    say("|---|---:|---:|---:|---|")
    for g in languages:
        mde = g["mde"]
        say(f"| {g['group']} | {g['datasets']} | {g['queries']} | "
            f"{'—' if mde is None else f'{mde:.3f}'} | {verdict(mde is not None and mde <= 0.03)} |")
    say("")


def s3_overhead(m: dict) -> None:
    """S3: each evaluation's overhead."""
    rows = m["rows"]
    say("## S3. Evaluation overhead (every `evaluate_arm` job of the cold run)")
    say("")
    say(f"{len(rows)} jobs, {sum(r['searches'] for r in rows)} searches. The light jobs' server "
        f"(crmatrix.pipeline.warm), its log's last line: `{m['warm']}`.")
    say("")
    overhead_table(rows)
    kinds = {"hand-written and public datasets": [r for r in rows if "-derived/" not in r["cell"]],
             "derived datasets (up to 300 queries each)": [r for r in rows if "-derived/" in r["cell"]]}
    say("By dataset kind, median overhead (wall; CPU): " + "; ".join(
        f"the {len(rs)} jobs of {kind} {statistics.median(r['overhead'] for r in rs):.2f} s, "
        f"{statistics.median(r['cpu_overhead'] for r in rs):.2f} s" for kind, rs in kinds.items() if rs) + ".")
    say("")


def s4_noop(m: dict) -> None:
    """S4: the no-op rerun against Snakemake's floor, and whose time it is."""
    cold_jobs, noop, noop_plan, floor, profile = m["cold_jobs"], m["noop"], m["noop_plan"], m["floor"], m["profile"]
    say("## S4. No-op rerun")
    say("")
    say(f"`snakemake --profile profiles/local --cores {CORES} all --configfile {SEED}` with everything done: "
        f"**{noop:.2f} s** (the fastest of {REPEATS}, in turns with the floor's); planning only "
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


def s5_added_arm(m: dict) -> None:
    """S5: one added query-time arm."""
    noop, cold, added, added_cpu, added_search = m["noop"], m["cold"], m["added"], m["added_cpu"], m["added_search"]
    added_clock, added_jobs, added_pack = m["added_clock"], m["added_jobs"], m["added_pack"]
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


def s6_memory(m: dict) -> None:
    """S6: peak memory and embeddings."""
    peak, who, embedded, naive, distinct = m["peak"], m["who"], m["embedded"], m["naive"], m["distinct"]
    say("## S6. Memory and embeddings")
    say("")
    say(f"Largest peak RSS: **{peak / 1024:.2f} GiB** ({who}).")
    say("")
    say(f"Texts embedded over all {SEED} indexes: **{embedded}**, for {distinct} distinct (text, model) pairs "
        f"indexed; symbols x arms (one embedding per symbol per arm, as re-indexing per arm would do): "
        f"{naive} — {embedded / naive:.2f}x of that.")
    say("")
