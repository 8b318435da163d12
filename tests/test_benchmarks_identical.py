"""benchmarks/identical.py on two finished clones made here: a run equal but for its timings is
identical, a changed rank and a file one side lacks are named, and a clone without a run is one
error."""

import os
import subprocess
import sys

import fixture_runs
from conftest import ROOT
from test_benchmarks_swe_bench import empty_clone

SCRIPT = ROOT / "benchmarks" / "identical.py"


def identical(*args) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True, env=env,
                          timeout=120)


def clone_with(tmp_path, name: str, ranks: dict[str, list], elapsed: float = 0.0):
    (tmp_path / name).mkdir()
    clone = empty_clone(tmp_path / name)
    for dataset, r in ranks.items():
        doc = fixture_runs.run(dataset, "baseline", r, "python")
        for q in doc["methods"]["hybrid"]["queries"]:
            q["elapsed_ms"] += elapsed
        fixture_runs.write(clone / "results" / "runs" / dataset / "builtin" / "baseline.json", doc)
    (clone / "results" / "matrix").mkdir(parents=True)
    (clone / "results" / "matrix" / "gate.txt").write_text("no gate\n")
    return clone


def test_timings_aside_the_same_and_each_difference_named(tmp_path):
    a = clone_with(tmp_path, "a", {"alpha": [1, 2, None], "beta": [1, 1]})
    b = clone_with(tmp_path, "b", {"alpha": [1, 2, None], "beta": [1, 3], "gamma": [1]}, elapsed=5.0)
    proc = identical(a, b, "--config", "config/config.yaml")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "- byte-identical: 1 files\n" in out  # gate.txt
    assert "- identical but for timings (" in out and "): 1 files\n" in out  # alpha: its elapsed_ms alone
    assert "- differing otherwise: 1 files\n- in one run only: 1\n  - `runs/gamma/builtin/baseline.json`\n" in out
    section = out[out.index("## `runs/beta/builtin/baseline.json`"):]
    assert "\n.methods.hybrid.queries[1].rank: 1 -> 3\n" in section


def test_a_clone_without_a_run_is_one_error(tmp_path):
    a = clone_with(tmp_path, "a", {"alpha": [1]})
    proc = identical(a, tmp_path, "--config", "c.yaml")
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr == f"{tmp_path}/results/runs: no finished run to compare\n"


def test_a_slice_compares_the_runs_of_its_datasets_alone(tmp_path):
    a = clone_with(tmp_path, "a", {"lite-flask": [1, 2], "lite-sympy": [1]})
    b = clone_with(tmp_path, "b", {"lite-flask": [1, 2], "lite-sympy": [2], "lite-all-flask": [1]}, elapsed=1.0)
    proc = identical(a, b, "--config", "c.yaml", "--datasets", "lite-flask", "lite-req*")
    assert proc.returncode == 0, proc.stderr
    assert "`c.yaml`, the runs of lite-flask, lite-req*, A: clone at " in proc.stdout
    assert "- byte-identical: 1 files\n" in proc.stdout and "): 1 files\n" in proc.stdout  # gate.txt; lite-flask's run
    assert "- differing otherwise: 0 files\n- in one run only: 0\n" in proc.stdout  # sympy's and lite-all's not read
