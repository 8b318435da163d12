"""benchmarks/swe_bench_tools.py and arena.py on a finished clone made here with the library's own
writers: a run of two Lite splits (widget, gadget) by the builtin and a command tool, their cells
and phase matrix, the tool's index listing of widget's trees (one shared by two commits, one
found built), gadget's trees as its runs record them, Snakemake's logs and benchmark files.
Their help, the leaderboard and pooled figures as the matrix has them, each commit's costs, and
that nothing is written to benchmarks/results unless asked."""

import os
import subprocess
import sys
from pathlib import Path

import fixture_runs
from conftest import ROOT
from test_benchmarks_swe_bench import empty_clone, snakemake_log, tracked_results

from crmatrix import atomic, integrity
from crmatrix.results.matrix import PhaseMatrix
from crmatrix.stages import collect_matrix
from crmatrix.versions.commits import FORMAT, INDEX_INFO

C1, C2, C3 = "1111aaaa" + "1" * 32, "2222bbbb" + "2" * 32, "3333cccc" + "3" * 32
D1, D2 = "4444dddd" + "4" * 32, "5555eeee" + "5" * 32
# dataset -> its corpus and each task's commit; the tool's ranks, search ms, and what it named
SPLITS = {
    "lite-widget": ("widget", [C1, C1, C2, C3], [1, None, 2, 1], [100.0, 300.0, 50.0, 80.0], {2: "empty"}),
    "lite-gadget": ("gadget", [D1, D2], [None, None], [10.0, 20.0], {2: "unresolved"}),
}
BUILTIN = {"lite-widget": [1, 2, None, 1], "lite-gadget": [1, 1]}
WIDGET_TREES = {"aaaa000000000000": {"commits": [C1, C2], "seconds": 2.5, "bytes": 4096, "built": True},
                "bbbb000000000000": {"commits": [C3], "seconds": 1.5, "bytes": 1024, "built": False}}
GADGET_TREES = {"cccc000000000000": {"commits": [D1]}, "dddd000000000000": {"commits": [D2]}}


def script(name: str, *args) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run([sys.executable, str(ROOT / "benchmarks" / name), *map(str, args)], capture_output=True,
                          text=True, env=env, timeout=120)


def tool_run(dataset: str) -> dict:
    corpus, commits, ranks, ms, named = SPLITS[dataset]
    doc = fixture_runs.run(dataset, "baseline", ranks, "python", system="fake")
    search = doc["methods"]["hybrid"]
    for i, q in enumerate(search["queries"], 1):
        q["elapsed_ms"] = ms[i - 1]
        if i in named:
            q["outcome"] = named[i]
    if dataset == "lite-gadget":  # its first query timed out
        search["queries"][0].update(failure="timeout", error="timed out")
        search["failures"] = {"timeout": 1}
    search.update(granularity="span", file_metrics={"mrr": 0.5, "acc@1": 0.25, "acc@5": 0.75})
    doc["methods"] = {"search": search}
    trees = WIDGET_TREES if corpus == "widget" else GADGET_TREES
    doc["provenance"]["system"] = {"name": "fake", "type": "command", "methods": ["search"]}
    doc["provenance"]["system_run"] = {"trees": {k: {"commits": t["commits"], "calls": 1,
                                                     "query_ms": {"p50": 1.0, "p95": 1.0}} for k, t in trees.items()}}
    return doc


def results(clone: Path) -> None:
    """The runs, their tasks, cells and matrix, and the tool's index listing of widget."""
    runs = []
    for dataset, (corpus, commits, *_) in SPLITS.items():
        builtin = fixture_runs.with_method(fixture_runs.run(dataset, "baseline", BUILTIN[dataset], "python"), "bm25",
                                           BUILTIN[dataset])
        for hybrid_or_lexical in builtin["methods"].values():
            hybrid_or_lexical["file_metrics"] = {"mrr": 1.0, "acc@1": 1.0, "acc@5": 1.0}
        for doc in (builtin, tool_run(dataset)):
            doc["provenance"]["corpus"]["name"] = corpus
            runs.append(fixture_runs.write(clone / "results" / "runs" / dataset / doc["system"] / "baseline.json", doc))
        atomic.write_jsonl(clone / "results" / "datasets" / f"{dataset}.jsonl", [
            {"task_id": f"q{i:03d}", "query": f"query {i}", "query_type": "natural_language",
             "gold": {"type": "file_set", "file_set": ["x.py"]}, "corpus": f"{corpus}@{c}", "stratum": ""}
            for i, c in enumerate(commits, 1)])
    cells = fixture_runs.cell_files(runs, "baseline", "bm25", {d: fixture_runs.facts("swe-bench") for d in SPLITS},
                                    where=lambda p: clone / "cells" / p.parent.parent.name / f"{p.parent.name}.json")
    matrix = clone / "results" / "matrix"
    collect_matrix.run(cells, "baseline", "bm25", ["baseline"], {}, matrix / "phase-matrix.json",
                       matrix / "phase-matrix.md", ledger_path=clone / "ledger.json", reference="builtin",
                       pooled_as={d: "lite" for d in SPLITS})
    listing = clone / "results" / "index" / "widget" / "fake" / "key1"
    atomic.write_json(listing / INDEX_INFO, {"format": FORMAT, "built": 1, "reused": 1, "trees": {
        k: {**t, "index": f"results/tree-index/widget/fake/key1/{k}"} for k, t in WIDGET_TREES.items()}})
    integrity.record(listing)


def finished_clone(tmp_path: Path) -> Path:
    clone = empty_clone(tmp_path)
    snakemake_log(clone, "2026-12-04T010000.000000.snakemake.log", "2026-12-04 01:00:00",
                  ["Fri Dec  4 01:00:30 2026", "Fri Dec  4 01:04:00 2026"], {"evaluate_arm": 1, "all": 1},
                  ["evaluate_arm", "all"])
    for rel, secs in {"install_system/fake/k.tsv": 20.0, "build_system_index_commits/widget/fake/k.tsv": 3.0,
                      "build_repository_index/widget/builtin/k.tsv": 7.0, "evaluate_arm/lite-widget/fake/baseline.tsv":
                      4.0, "evaluate_arm/lite-gadget/fake/baseline.tsv": 2.0,
                      "evaluate_arm/lite-widget/builtin/baseline.tsv": 1.0}.items():
        tsv = clone / "logs" / "benchmarks" / rel
        tsv.parent.mkdir(parents=True, exist_ok=True)
        tsv.write_text(f"s\th:m:s\tmax_rss\tcpu_time\n{secs}\t0:00:01\t100\t1.0\n")
    results(clone)
    return clone


def figures(scored) -> str:
    return " | ".join(f"{scored[m].mean:.3f} [{scored[m].ci_low:.2f}, {scored[m].ci_high:.2f}]"
                      for m in ("acc_all@1", "acc_all@5", "acc_all@10", "mrr"))


def test_help_works_without_a_clone():
    for name, usage in (("swe_bench_tools.py", "usage: benchmarks/swe_bench_tools.py [-h] [--note NOTE] "
                                               "[--out OUT | --write]"),
                        ("arena.py", "usage: benchmarks/arena.py [-h] [--note NOTE] [--out OUT | --write]"),
                        ("swe_qa.py", "usage: benchmarks/swe_qa.py [-h] [--note NOTE] [--out OUT | --write]"),
                        ("models.py", "usage: benchmarks/models.py [-h] [--note NOTE] [--out OUT | --write]"),
                        ("swe_bench_costs.py", "usage: benchmarks/swe_bench_costs.py [-h] [--note NOTE] "
                                               "[--out OUT | --write]")):
        proc = script(name, "--help")
        assert (proc.returncode, proc.stderr) == (0, ""), name
        assert proc.stdout.startswith(usage) and "benchmarks/results/" in proc.stdout


def test_the_tools_report_reads_the_matrix_and_each_commits_costs(tmp_path):
    clone, before = finished_clone(tmp_path), tracked_results()
    proc = script("swe_bench_tools.py", clone, "--note", "Machine: load 3.")
    assert proc.returncode == 0, proc.stderr
    assert tracked_results() == before  # printed, nothing written
    out = proc.stdout
    assert "cold: the one Snakemake command of the clone that ran jobs" in out and "Machine: load 3." in out
    assert "Snakemake wall time of the run: **4.0 min** for 1 jobs" in out
    assert "The leaderboard ranks at the **symbol** level (no system answers whole files)" in out
    m = PhaseMatrix.read(clone / "results" / "matrix" / "phase-matrix.json")
    board = {s.system: s for s in m.leaderboard.standings}
    assert [s.system for s in m.leaderboard.standings] == ["builtin", "fake"]
    fake = board["fake"]
    # the standing's own counts beside its job seconds (install 20, index 3, evaluation 4 + 2)
    assert (f"| {fake.rank} | fake | search | 2 | 6 | {fake.mean:.3f} | " in out
            and f" | 1 | 1 | 1 | {fake.latency_ms['p50']:.1f} | {fake.latency_ms['p95']:.1f} | 20 | 3 | 6 |" in out)
    assert f"| 1 | builtin | bm25 | 2 | 6 | {board['builtin'].mean:.3f} | reference | 0 | 0 | 0 | " in out
    assert out.count(" | — | 7 | 1 |") == 1  # the builtin: no install, its repository index, its evaluation
    pooled = {p.system: p.methods["baseline"] for p in m.pooled_benchmarks}
    assert "### lite" in out
    search = pooled["fake"]["search"]  # ranks 1, -, 2, 1 on widget, none on gadget: over the six tasks
    assert (search["acc_all@1"].mean, search["acc_all@5"].mean, search["mrr"].mean) == (2 / 6, 3 / 6, 2.5 / 6)
    assert f"| {fake.rank} | fake | search (headline) | 2 | 6 | {figures(search)} | 1 | 1 | 1 |" in out
    # the builtin's every method, its headline first
    hybrid = out.index(f"| 1 | builtin | hybrid | 2 | 6 | {figures(pooled['builtin']['hybrid'])} | 0 | 0 | 0 |")
    assert out.index("| 1 | builtin | bm25 (headline) |") < hybrid < out.index("| 1 | builtin | lexical |")
    # widget's trees: C1 and C2 share one index, which this run built; C3's was found built
    assert "\n| fake | 2 | 5 | 4 | 1 | 1 | 4.0 | 5,120 |\n" in out
    costs = out[out.index("### fake"):]
    assert costs.splitlines()[3:10] == [
        "|---|---|---|---|---:|---:|---|---:|---:|---:|",
        "| gadget | 4444dddd | cccc000000000000 | — | — | — | — (none) | 1 | 10.0 | 10.0 |",
        "| gadget | 5555eeee | dddd000000000000 | — | — | — | — (none) | 1 | 20.0 | 20.0 |",
        "| widget | 1111aaaa | aaaa000000000000 | 2222bbbb | 2.5 | 4,096 | built | 2 | 200.0 | 290.0 |",
        "| widget | 2222bbbb | aaaa000000000000 | 1111aaaa | 2.5 | 4,096 | built | 1 | 50.0 | 50.0 |",
        "| widget | 3333cccc | bbbb000000000000 | — | 1.5 | 1,024 | reused | 1 | 80.0 | 80.0 |",
        ""]
    report = tmp_path / "report.md"
    again = script("swe_bench_tools.py", clone, "--note", "Machine: load 3.", "--out", report)
    assert again.returncode == 0 and tracked_results() == before
    assert again.stdout == out + f"wrote {report}\n" and report.read_text() == out


def test_the_arena_report_names_the_level_file_figures_and_what_named_nothing(tmp_path):
    clone, before = finished_clone(tmp_path), tracked_results()
    proc = script("arena.py", clone)
    assert proc.returncode == 0, proc.stderr
    assert tracked_results() == before
    m = PhaseMatrix.read(clone / "results" / "matrix" / "phase-matrix.json")
    fake = m.leaderboard.standings[1]
    assert "cold: the one Snakemake command of the clone that ran jobs" in proc.stdout
    assert "2 datasets, 2 systems, arm `baseline`" in proc.stdout
    assert "The leaderboard ranks at the **symbol** level" in proc.stdout
    assert (f" | 1 | 1 | 1 | {fake.latency_ms['p50']:.1f} | {fake.latency_ms['p95']:.1f} | 0.500 | 0.250 | 0.750 | "
            "20 | 3 | 6 |") in proc.stdout
    assert " | 0 | 0 | 0 | " in proc.stdout and " | 1.000 | 1.000 | 1.000 | — | 7 | 1 |" in proc.stdout
    assert "| lite-gadget | " in proc.stdout and " (1) |" in proc.stdout  # gadget's timeout beside its MRR


def test_a_clone_without_a_matrix_is_one_line_naming_it(tmp_path):
    for name in ("swe_bench_tools.py", "arena.py"):
        proc = script(name, tmp_path)
        assert (proc.returncode, proc.stdout) == (1, "")
        matrix = tmp_path / "results" / "matrix" / "phase-matrix.json"
        assert proc.stderr == f"{matrix}: no phase matrix, so no finished run to read\n"
