"""benchmarks/arms_by_language.py on a finished clone made here (a Snakemake log, a phase matrix's
rows, runs of two arms): each arm's paired difference on one method per language, datasets as
written and derived ones apart, structural splits left out, and its errors."""

import json
import os
import subprocess
import sys

import fixture_runs
from conftest import ROOT
from test_benchmarks_swe_bench import empty_clone, snakemake_log

SCRIPT = ROOT / "benchmarks" / "arms_by_language.py"
# dataset -> (language, corpus, split); alpha-derived scores on a view of alpha's corpus
ROWS = {"alpha": ("python", "alpha", None), "alpha-structural": ("python", "alpha", "structural"),
        "alpha-derived": ("python", "alpha~nodocs", None), "gamma": ("rust", "gamma", None)}


def arms_by_language(*args) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True, env=env,
                          timeout=120)


def finished(tmp_path, drop_query: bool = False):
    tmp_path.mkdir(parents=True, exist_ok=True)
    clone = empty_clone(tmp_path)
    snakemake_log(clone, "2026-12-05T010000.000000.snakemake.log", "2026-12-05 01:00:00",
                  ["Sat Dec  5 01:00:30 2026", "Sat Dec  5 01:02:00 2026"], {"evaluate_arm": 1, "all": 1},
                  ["evaluate_arm", "all"])
    matrix = {"baseline_arm": "baseline", "arms": ["baseline", "stacked"],
              "rows": [{"dataset": d, "system": "builtin", "language": lang, "corpus": corpus, "split": split}
                       for d, (lang, corpus, split) in ROWS.items()]}
    path = clone / "results" / "matrix" / "phase-matrix.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(matrix))
    for dataset, (language, _, _) in ROWS.items():
        ranks = fixture_runs.RANKS["gamma" if language == "rust" else "alpha"][1]
        for arm in ("baseline", "stacked"):
            doc = fixture_runs.run(dataset, arm, ranks[arm], language)
            if drop_query and arm == "stacked" and dataset == "gamma":
                doc["methods"]["hybrid"]["queries"].pop()
            fixture_runs.write(clone / "results" / "runs" / dataset / "builtin" / f"{arm}.json", doc)
    return clone


def test_each_arm_per_language_as_written_and_derived_apart(tmp_path):
    proc = arms_by_language(finished(tmp_path), "--config", "config/seed-matrix.yaml", "--method", "hybrid")
    assert proc.returncode == 0, proc.stderr
    table = proc.stdout[proc.stdout.index("| arm | language |"):].splitlines()
    # alpha: MRR 0.478 -> 0.783 (+0.305); gamma (rust): 0.378 -> 0.783 (+0.405); the structural split is no row
    assert table[2:] == [
        "| stacked | python, as written | 1 | 10 | +0.305 [+0.125, +0.483] | better |",
        "| stacked | python, derived | 1 | 10 | +0.305 [+0.125, +0.483] | better |",
        "| stacked | rust, as written | 1 | 10 | +0.405 [+0.217, +0.582] | better |",
        "| stacked | all, as written | 2 | 20 | +0.355 [+0.228, +0.488] | better |"]  # derived: python alone
    assert "`make run CONFIG=config/seed-matrix.yaml` in a clean clone" in proc.stdout


def test_an_unknown_arm_or_a_missing_query_is_one_error(tmp_path):
    proc = arms_by_language(finished(tmp_path), "--config", "c.yaml", "--arms", "stacked,nope")
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr == "--arms: nope not in the run's arms (baseline, stacked)\n"
    proc = arms_by_language(finished(tmp_path / "b", drop_query=True), "--config", "c.yaml", "--method", "hybrid")
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr == "gamma: query q010 of the baseline has no run of the arm's\n"
