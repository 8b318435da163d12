"""benchmarks/history.py on a finished clone made here: a phase matrix of one history dataset
(its tasks, drops, leaky share, two methods with their strata, one arm judged), a Snakemake log
and two benchmark files. Its help, each table's figures as the matrix has them, and that nothing
is written to benchmarks/results unless asked."""

from test_benchmarks_swe_bench import empty_clone, snakemake_log, tracked_results
from test_benchmarks_swe_bench_tools import script

from crmatrix.results.cell import Scored, Stratum
from crmatrix.results.matrix import (
    BenchmarkEntry,
    Dropped,
    MethodBenchmark,
    PhaseMatrix,
    Rollup,
    RollupCell,
    Statistics,
)
from crmatrix.results.pool import Judged, Power, PowerGroup

METRICS = ("acc_all@1", "acc_all@5", "acc_all@10", "mrr")


def scores(*values: float) -> dict[str, Scored]:
    return {k: Scored(mean=v, ci_low=v - 0.1, ci_high=v + 0.1) for k, v in zip(METRICS, values, strict=True)}


def method(all_: tuple, clean: tuple) -> MethodBenchmark:
    return MethodBenchmark(scores=scores(*all_), strata={"clean": Stratum(n=3, scores=scores(*clean)),
                                                         "leaky": Stratum(n=1, scores=scores(1, 1, 1, 1))})


def finished_clone(tmp_path):
    clone = empty_clone(tmp_path)
    snakemake_log(clone, "2026-12-05T010000.000000.snakemake.log", "2026-12-05 01:00:00",
                  ["Sat Dec  5 01:00:30 2026", "Sat Dec  5 01:06:00 2026"], {"evaluate_arm": 1, "all": 1},
                  ["evaluate_arm", "all"])
    for rel, (secs, cpu) in {"build_repository_index/gin/builtin/k.tsv": (80.0, 75.5),
                             "evaluate_arm/history-gin/builtin/baseline.tsv": (20.0, 12.25)}.items():
        tsv = clone / "logs" / "benchmarks" / rel
        tsv.parent.mkdir(parents=True, exist_ok=True)
        tsv.write_text(f"s\th:m:s\tmax_rss\tcpu_time\n{secs}\t0:00:01\t100\t{cpu}\n")
    entry = BenchmarkEntry(
        dataset="history-gin", system="builtin", method="hybrid", format="history", metrics=METRICS,
        arms={"baseline": scores(0.25, 0.5, 0.75, 0.4)}, strata={},
        dropped=Dropped(tasks=4, dropped=3, by_reason={"merge": 2, "revert": 1},
                        gold={"leaky": 1, "leaky_share": 0.25, "leaky_names": {"t4": ["gin.go"]}}),
        methods={"baseline": {"hybrid": method((0.25, 0.5, 0.75, 0.4), (0.0, 1 / 3, 2 / 3, 0.2)),
                              "bm25": method((0.5, 0.75, 1.0, 0.6), (1 / 3, 2 / 3, 1.0, 0.5))}})
    judged = Judged(delta=-0.05, ci=(-0.09, -0.01), half_width=0.04, mde=0.03, verdict="negative", moved=2)
    group = PowerGroup(group="go", kind="language", system="builtin", datasets=1, queries=4, mde=0.03,
                       mde_arms=("rrf",), arms={"rrf": judged})
    m = PhaseMatrix(metric="mrr", baseline_arm="baseline", arms=("baseline", "2e-only", "rrf"), rows=(),
               by_language=(Rollup(system="builtin", datasets=("history-gin",), language="go",
                                   arms={"baseline": RollupCell(mean=0.4, datasets=1)}),),
               by_archetype=(), knobs=(), gates=(), pooled=(),
               power=Power(method="hybrid", metric="mrr", alpha=0.05, target_power=0.8, moved_share=0.1, rows=(),
                           groups=(group, PowerGroup(group="all datasets", kind="overall", system="builtin",
                                                     datasets=1, queries=4, mde=None, mde_arms=(), arms={}))),
               benchmarks=(entry,), test_ledger=(),
               statistics=Statistics(bootstrap_resamples=1000, seed=0, level=0.95, alpha=0.05, min_queries=6,
                                     test="paired randomization", comparisons=None, detectable_effect="",
                                     pooling="", bands=""))
    path = clone / "results" / "matrix" / "phase-matrix.json"
    path.parent.mkdir(parents=True)
    m.write(path)
    return clone


def test_help_works_without_a_clone():
    proc = script("history.py", "--help")
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout.startswith("usage: benchmarks/history.py [-h] [--note NOTE] [--out OUT | --write]")


def test_a_clone_without_a_matrix_is_one_line(tmp_path):
    proc = script("history.py", empty_clone(tmp_path))
    assert proc.returncode == 1
    assert proc.stderr == f"{tmp_path / 'clone' / 'results/matrix/phase-matrix.json'}: no phase matrix, so no " \
                          "finished run to read\n"


def test_the_report_gives_tasks_methods_strata_and_the_arms_decided(tmp_path):
    clone, before = finished_clone(tmp_path), tracked_results()
    proc = script("history.py", clone, "--note", "Machine: alone.")
    assert proc.returncode == 0, proc.stderr
    assert tracked_results() == before
    out = proc.stdout
    assert "cold: the one Snakemake command of the clone that ran jobs" in out and "Machine: alone." in out
    assert "Snakemake wall time of the run: **6.0 min** for 1 jobs" in out
    assert ("| build_repository_index | 1 | 80.0 | 75.5 |\n| evaluate_arm | 1 | 20.0 | 12.2 |\n"
            "| total | 2 | | 87.8 |") in out
    assert "| history-gin | go | 4 | 1 | 25.0 % | 3 | merge 2; revert 1 |" in out
    assert "Every task (4), then the 3 that are not leaky." in out
    # the headline first, each method over all tasks then the clean ones
    assert ("| hybrid (headline) | all | 0.250 [0.15, 0.35] | 0.500 [0.40, 0.60] | 0.750 [0.65, 0.85] | "
            "0.400 [0.30, 0.50] |\n| hybrid (headline) | not leaky | 0.000 [-0.10, 0.10] | 0.333 [0.23, 0.43] | "
            "0.667 [0.57, 0.77] | 0.200 [0.10, 0.30] |\n| bm25 | all | 0.500 [0.40, 0.60]") in out
    assert ("| go | 4 | 2e-only | — | — | — | 0 | moved no query |\n"
            "| go | 4 | rrf | -0.050 | [-0.090, -0.010] | ±0.030 | 2 | negative |") in out
    assert "all datasets" not in out.split("## The arms decided per language")[1]


def test_write_out_writes_the_report_there(tmp_path):
    clone = finished_clone(tmp_path)
    out = tmp_path / "report.md"
    proc = script("history.py", clone, "--out", out)
    assert proc.returncode == 0, proc.stderr
    assert out.read_text() == proc.stdout.removesuffix(f"wrote {out}\n")
