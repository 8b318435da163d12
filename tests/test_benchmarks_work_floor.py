"""benchmarks/work_floor.py's readers of a finished run made here: the distinct texts each model
embedded (indexes and query sets, each text once), the searches as the runs timed them, and a
run whose model is not prepared one error. (The timings themselves are the benchmark's, by hand.)"""

import json
import os
import subprocess
import sys

import fixture_runs
from conftest import ROOT
from test_benchmarks_swe_bench import empty_clone, snakemake_log

sys.path.insert(0, str(ROOT / "benchmarks"))
import work_floor


def texts_file(path, texts, model):
    path.mkdir(parents=True)
    (path / "meta.json").write_text(json.dumps({"model": {"sha256": model} if model else None}))
    (path / "texts.jsonl").write_text("".join(json.dumps({"text_sha": f"sha-{t}", "text": t}) + "\n" for t in texts))


def test_each_models_distinct_texts_and_the_runs_searches(tmp_path):
    results = tmp_path / "results"
    texts_file(results / "index/c/builtin/k1", ["a", "b"], "m1")
    texts_file(results / "index/c/builtin/k2", ["b", "c"], "m1")  # b: once
    texts_file(results / "index/r/builtin/k1/files", ["d"], "m2")  # a repository's file part
    texts_file(results / "index/r/words/k3/symbols", ["e"], None)  # no vectors: nothing embedded
    (results / "queries/d/m").mkdir(parents=True)
    queries = [{"query": "q", "text_sha": "sha-q"}, {"query": "a", "text_sha": "sha-a"}]
    (results / "queries/d/m/meta.json").write_text(json.dumps({"model": {"sha256": "m1"}, "queries": queries}))
    assert work_floor.distinct_texts(results) == {"m1": {"sha-a": "a", "sha-b": "b", "sha-c": "c", "sha-q": "q"},
                                                  "m2": {"sha-d": "d"}}
    fixture_runs.write(results / "runs/alpha/builtin/baseline.json",
                       fixture_runs.run("alpha", "baseline", [1, 2], "python"))
    seconds, n = work_floor.search_seconds(results)
    # two methods, two queries each: hybrid's 15 and 18 ms, lexical's 1.875 and 2.25
    assert (round(seconds, 6), n) == (round((15 + 18 + 1.875 + 2.25) / 1000, 6), 4)


def test_a_run_embedded_with_a_model_it_does_not_hold_is_one_error(tmp_path):
    clone = empty_clone(tmp_path)
    snakemake_log(clone, "2026-12-05T010000.000000.snakemake.log", "2026-12-05 01:00:00",
                  ["Sat Dec  5 01:00:30 2026"], {"build_index": 1, "all": 1}, ["build_index"])
    texts_file(clone / "results/index/c/builtin/k1", ["a"], "m1")
    (clone / "results/models").mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "work_floor.py"), str(clone), "--config",
                           "c.yaml", "--threads", "1"], capture_output=True, text=True, env=env, timeout=120)
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr == f"{clone}/results/models: no prepared model of sha256 m1, which the run embedded with\n"
