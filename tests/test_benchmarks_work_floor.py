"""benchmarks/work_floor.py's readers of a finished run made here: the distinct texts each model
embedded (indexes and query sets, each text once), the searches as the runs timed them, and a
run whose model is not prepared one error. (The timings themselves are the benchmark's, by hand.)"""

import json
import os
import subprocess
import sys

import fixture_runs
import numpy as np
import pytest
import test_models
from conftest import ROOT
from test_benchmarks_swe_bench import empty_clone, snakemake_log

sys.path.insert(0, str(ROOT / "benchmarks"))
import work_floor

from crmatrix.embed.backends import load_embedder


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


@pytest.mark.parametrize("kind", ["onnx-mean", "onnx-pooled", "static", "static-quantized"])
def test_the_bare_loops_embed_as_crmatrix_embeds(tmp_path, kind):
    """What the floor times is the model's own work: each bare loop's vectors are crmatrix's, on a
    tiny model of each kind (an unknown word beside known ones: model2vec drops it, an ONNX graph
    keeps it)."""
    if kind.startswith("onnx"):
        conf = test_models.onnx_conf(tmp_path, pooled=kind == "onnx-pooled")
    else:
        extra = {}
        table = test_models.TABLE.copy()
        table[0] = [0, 0, 0, 5]  # [UNK]'s row, which model2vec leaves out of the mean
        if kind == "static-quantized":
            table = np.array([[0, 0, 0, 0], [2, 0, 0, 0], [0, 2, 1, 0]], dtype=np.int8)
            extra = {"mapping": np.array([0, 0, 1, 2, 1, 2, 2, 1], dtype=np.int64),
                     "weights": np.array([0, 0, 1, 0.5, 2, 1, 1, 3], dtype=np.float32)}
        conf = {"format": "static", "source": str(test_models.write_static(tmp_path / "m2v", table, **extra)),
                "quantize": "none"}
    out = tmp_path / "out"
    meta = test_models.prepare("m", conf, out)
    texts = [*test_models.TEXTS, "parse unheard config"]
    loop = work_floor.BARE[meta["backend"]](out, 1)
    np.testing.assert_allclose(np.array(loop.encode(texts)), load_embedder(meta, out, threads=1).encode(texts),
                               atol=1e-6)
    # the floor embeds each input once: spacing never counts, an unknown word does only in a graph
    dropped = kind.startswith("static")
    assert work_floor.distinct_inputs(loop, [*texts, "parse  config", "parse other config"]) == (
        texts[:-1] if dropped else texts)


def test_the_timed_embedders_take_turns_on_each_chunk_of_texts(monkeypatch):
    """Each embedder sees every text once a pass, a chunk at a time, their order reversed from one
    chunk to the next; each's seconds are its calls' summed, the mean of the passes."""
    calls, clock = [], iter(range(1000))
    monkeypatch.setattr(work_floor, "cpu_now", lambda: next(clock))

    class Recorder:
        def __init__(self, name):
            self.name = name

        def encode(self, texts):
            calls.append((self.name, list(texts)))
            if self.name == "slow":  # this call takes two ticks of the clock
                next(clock)

    texts = [f"t{i}" for i in range(5)]
    cpu = work_floor.in_turns(texts, {"bare": Recorder("bare"), "slow": Recorder("slow")}, n=2, chunk=2)
    one_pass = [("bare", ["t0", "t1"]), ("slow", ["t0", "t1"]), ("slow", ["t2", "t3"]), ("bare", ["t2", "t3"]),
                ("bare", ["t4"]), ("slow", ["t4"])]
    assert calls == one_pass * 2
    assert {name: seconds[0] for name, seconds in cpu.items()} == {"bare": 3.0, "slow": 6.0}
