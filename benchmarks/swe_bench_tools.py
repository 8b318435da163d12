"""The arena's tools on SWE-bench localization (issue 46), run by hand (not in CI):

    make run CONFIG=config/swe-bench-tools.yaml     # in a clean clone, cold
    .venv/bin/python benchmarks/swe_bench_tools.py CLONE [--note TEXT] [--out FILE | --write]

reads the finished run in CLONE and prints its report; `--out FILE` writes it to FILE too,
`--write` to benchmarks/results/swe-bench-tools-<date>-clean.md (a tracked file). The report:

1. the run: cold or not and its wall time (the clone's Snakemake logs); the phase matrix's
   leaderboard (results/matrix/phase-matrix.json) with its level, each system's headline
   method, failed, empty and unresolved answers, latency and its install, index and evaluation
   job seconds (Snakemake's benchmark files);
2. per benchmark (Lite, Verified), every method of every system in leaderboard order (the
   builtin's each): file Acc@1, Acc@5, Acc@10 (SweRank's: every gold file within the top k) and
   MRR with their 95 % bootstrap intervals, as the matrix pooled them over the benchmark's splits
   (`pooled_benchmarks`; a benchmark of one split: its dataset's entry), beside the queries and
   how many were empty, unresolved or failed;
3. per tool and commit (each commit's candidate files a tree, one index per distinct tree):
   the tree, the other commits sharing it, the index's seconds and bytes, whether this run's
   index job built it or found it built, and the search latency p50/p95 of the commit's tasks.
   A tool's trees are its index job's listing (results/index/CORPUS/SYSTEM/KEY/crmatrix-index.json);
   a tool without an index job (it indexes as it starts) has the trees its runs record.
"""

from __future__ import annotations

import sys
from pathlib import Path

import compared
import finished_run

from crmatrix.datasets.tasks import read_tasks
from crmatrix.evaluation import metrics
from crmatrix.results.cell import Scored
from crmatrix.results.matrix import PhaseMatrix
from crmatrix.results.run import Run
from crmatrix.versions import commit_of
from crmatrix.versions.commits import INDEX_INFO, tree_indexes

CONFIG = "config/swe-bench-tools.yaml"
METRICS = {"acc_all@1": "Acc@1", "acc_all@5": "Acc@5", "acc_all@10": "Acc@10", "mrr": "MRR"}
SHORT = 8  # a commit's characters shown

# benchmark -> system -> (its datasets, method -> metric -> figure)
Groups = dict[str, dict[str, tuple[tuple[str, ...], dict[str, dict[str, Scored]]]]]


def benchmark_groups(m: PhaseMatrix) -> Groups:
    """Every method's figures per benchmark and system under the baseline arm: a benchmark split
    over datasets as the matrix pooled it, a dataset no pool holds under its own name."""
    out: Groups = {}
    pooled = set()
    for p in m.pooled_benchmarks:
        if m.baseline_arm in p.methods:
            out.setdefault(p.benchmark, {})[p.system] = (p.datasets, p.methods[m.baseline_arm])
            pooled |= {(d, p.system) for d in p.datasets}
    for e in m.benchmarks:
        if (e.dataset, e.system) not in pooled and m.baseline_arm in e.methods:
            out.setdefault(e.dataset, {})[e.system] = (
                (e.dataset,), {method: b.scores for method, b in e.methods[m.baseline_arm].items()})
    return dict(sorted(out.items()))


def score_lines(m: PhaseMatrix, runs: list[Run]) -> list[str]:
    """Per benchmark, each system's methods (its headline first) in leaderboard order."""
    lines = []
    for bench, systems in benchmark_groups(m).items():
        lines += [f"### {bench}", "", "| rank | system | method | datasets | queries | "
                  + " | ".join(METRICS.values()) + " | empty | unresolved | failed |",
                  "|---:|---|---|---:|---:|" + "---|" * len(METRICS) + "---:|---:|---:|"]
        for s in (s for s in m.leaderboard.standings if s.system in systems):
            datasets, methods = systems[s.system]
            mine = [r for r in runs if r.system == s.system and r.dataset in datasets]
            for method in sorted(methods, key=lambda x: (x != s.method, x)):
                n = compared.outcomes(mine, method)
                figures = " | ".join(f"{methods[method][k].mean:.3f} [{methods[method][k].ci_low:.2f}, "
                                     f"{methods[method][k].ci_high:.2f}]" for k in METRICS)
                lines.append(f"| {s.rank} | {s.system} | {method}{' (headline)' if method == s.method else ''} | "
                             f"{len(datasets)} | {n['queries']} | {figures} | {n['empty']} | {n['unresolved']} | "
                             f"{n['failed']} |")
        lines.append("")
    return lines


def trees(clone: Path, corpus: str, system: str, runs: list[Run]) -> dict[str, dict]:
    """The tool's trees of a repository: tree key -> its commits and (with an index job) its
    index's `seconds`, `bytes` and whether the job `built` it; one clear line when the corpus has
    more than one listing (a clone that ran with other settings too)."""
    listings = sorted((clone / "results" / "index" / corpus / system).glob(f"*/{INDEX_INFO}"))
    if len(listings) > 1:
        sys.exit(f"{clone}/results/index/{corpus}/{system}: {len(listings)} index listings "
                 f"({', '.join(p.parent.name for p in listings)}); expected one, as a clean clone's run makes")
    if listings:
        return tree_indexes(listings[0].parent)
    out: dict[str, dict] = {}
    for r in runs:
        for key, tree in sorted(((r.provenance.system_run or {}).get("trees") or {}).items()):
            entry = out.setdefault(key, {"commits": []})
            entry["commits"] = sorted(set(entry["commits"]) | set(tree["commits"]))
    return dict(sorted(out.items()))


def commit_latency(clone: Path, runs: list[Run], method: str) -> dict[str, list[float]]:
    """Commit -> the search times (ms) of its tasks' queries under `method` over `runs` (a task in
    two benchmarks, Lite and Verified, asked in each; a task's commit: its corpus in the dataset
    stage's results/datasets/DATASET.jsonl)."""
    out: dict[str, list[float]] = {}
    for r in runs:
        commit = {t.task_id: commit_of(t.corpus) for t in read_tasks(clone / "results" / "datasets"
                                                                      / f"{r.dataset}.jsonl")}
        for q in r.methods[method].queries:
            out.setdefault(commit[q.task_id], []).append(q.elapsed_ms)
    return out


def cost_lines(clone: Path, m: PhaseMatrix, runs: list[Run]) -> list[str]:
    """Per tool (a system whose runs record their trees), its trees' totals, then per commit."""
    summary = ["| system | repositories | commits | trees | built | reused | index s | index bytes |",
               "|---|---:|---:|---:|---:|---:|---:|---:|"]
    detail = []
    for s in m.leaderboard.standings:
        mine = [r for r in runs if r.system == s.system]
        if not any("trees" in (r.provenance.system_run or {}) for r in mine):
            continue
        by_corpus: dict[str, list[Run]] = {}
        for r in mine:
            by_corpus.setdefault(r.provenance.corpus.name, []).append(r)
        detail += [f"### {s.system}", "", "| repository | commit | tree | shared with | index s | index bytes | index "
                   "| queries | p50 ms | p95 ms |", "|---|---|---|---|---:|---:|---|---:|---:|---:|"]
        listed = {corpus: trees(clone, corpus, s.system, rs) for corpus, rs in sorted(by_corpus.items())}
        for corpus, listing in listed.items():
            latency = commit_latency(clone, by_corpus[corpus], s.method)
            for key, tree in listing.items():
                for c in tree["commits"]:
                    ms = latency.get(c, [])
                    lat = metrics.latency(ms)
                    others = ", ".join(o[:SHORT] for o in tree["commits"] if o != c) or "—"
                    index = ((f"{tree['seconds']:.1f}", f"{tree['bytes']:,}", "built" if tree["built"] else "reused")
                             if "seconds" in tree else ("—", "—", "— (none)"))
                    detail.append(f"| {corpus} | {c[:SHORT]} | {key} | {others} | {index[0]} | {index[1]} | "
                                  f"{index[2]} | {len(ms)} | " + (f"{lat['p50']:.1f} | {lat['p95']:.1f} |" if ms
                                                                 else "— | — |"))
        every = [t for listing in listed.values() for t in listing.values()]
        indexed = [t for t in every if "seconds" in t]
        summary.append(f"| {s.system} | {len(listed)} | {sum(len(t['commits']) for t in every)} | {len(every)} | "
                       + (f"{sum(t['built'] for t in indexed)} | {sum(not t['built'] for t in indexed)} | "
                          f"{sum(t['seconds'] for t in indexed):.1f} | {sum(t['bytes'] for t in indexed):,} |"
                          if indexed else "— | — | — | — |"))
        detail.append("")
    return ["## Per tool and commit: its tree, its index, its queries", "",
            "Each commit's candidate files are a tree (crmatrix.versions.trees); a tool indexes each distinct tree "
            "once (rule build_system_index_commits), so commits with the same files share one index. `built`: this "
            "run's index job built it; `reused`: found built by an earlier run (its seconds are that build's). "
            "Queries: the commit's tasks asked over the tool's runs (a task of Lite and Verified twice); latency: "
            "their search time as the runs record it (`elapsed_ms`; the tool is started anew on each tree). —: a "
            "tool without an index job (it indexes as it starts).", "",
            *summary, "", *detail]


def main() -> None:
    args = finished_run.parser("swe_bench_tools.py", __doc__, "swe-bench-tools").parse_args()
    clone = args.clone.resolve()
    m = compared.matrix(clone)
    runs = compared.baseline_runs(clone, m.baseline_arm)
    lines = finished_run.run_lines(clone, args.note, "The arena's tools on SWE-bench localization", CONFIG)
    lines += ["## The leaderboard", "", compared.level_line(m.leaderboard), "",
              "The matrix's figures over every dataset (each benchmark's split by repository): the headline "
              "method's macro MRR, its pooled Δ, failed and empty or unresolved answers, search latency; job seconds "
              "summed over the system's jobs (—: none).", "",
              *compared.board_lines(m.leaderboard, compared.job_seconds(clone)), "",
              "## Per benchmark: every method at file level", "",
              "As the matrix pooled each benchmark over its splits (the field's figure, one over all its tasks), with "
              "95 % bootstrap intervals (1000 resamples, seed 0); Acc@k: every gold file within the top k "
              "(SweRank's); queries, empty, unresolved and failed over the same splits.", "",
              *score_lines(m, runs), *cost_lines(clone, m, runs)]
    finished_run.emit(lines, args.out, args.write, "swe-bench-tools")


if __name__ == "__main__":
    main()
