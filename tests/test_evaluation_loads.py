"""What an evaluate_arm job loads: only what its methods run (issue 22, "imports only what
the job runs"). Each evaluation runs in a fresh interpreter, which reports the heavy modules
it ended up importing."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from test_engine import model_dir  # noqa: F401 - a fixture
from test_systems import CORPUS, DATASET

from crmatrix import config
from crmatrix.engine import index, knobs
from crmatrix.stages import embed_queries, extract_symbols, fetch_corpus, prepare_dataset
from crmatrix.symbols import read_symbols

# importlib.metadata too: its import alone is ~35 ms of CPU, in every job that reads a version with it
HEAVY = ("bm25s", "scipy", "tiktoken", "pandas", "altair", "torch", "onnxruntime", "transformers", "importlib.metadata")
CHILD = """
import json, sys
from crmatrix.evaluation.cell import CellJob
from crmatrix.stages import evaluate_arm
job = json.loads(sys.argv[1])
run = evaluate_arm.run(CellJob(**job["cell"]), cache_dir=job["cache_dir"]).to_json()
print(json.dumps({"loaded": sorted(m for m in json.loads(sys.argv[2]) if m in sys.modules),
                  "ranks": {m: [q["rank"] for q in r["queries"]] for m, r in run["methods"].items()},
                  "tokens": {m: [q["response_tokens"] for q in r["queries"]] for m, r in run["methods"].items()}}))
"""


@pytest.fixture(scope="module")
def job(tmp_path_factory, model_dir) -> dict:  # noqa: F811 - the fixture
    """An ASCII corpus and dataset, its index (vectors and BM25) and query vectors, as the workflow makes them."""
    root = tmp_path_factory.mktemp("job")
    for rel, text in CORPUS.items():
        (root / "src" / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / "src" / rel).write_text(text)
    (root / "ds.json").write_text(json.dumps(DATASET))
    fetch_corpus.run("c", {"path": str(root / "src"), "include": ["**"], "exclude": []}, root / "tree",
                     root / "manifest.json", [], {})
    extract_symbols.run(root / "tree", root / "manifest.json", root / "symbols.jsonl")
    prepare_dataset.run(root / "ds.json", "codelens", "c", root / "manifest.json", root / "symbols.jsonl",
                        root / "tasks.jsonl")
    index.build(read_symbols(root / "symbols.jsonl"), knobs.resolve({}, "python"), model_dir, root / "cache",
                root / "index")
    embed_queries.run(tasks=root / "tasks.jsonl", model_dir=model_dir, cache_dir=root / "cache", out=root / "qv")
    return {"tasks": root / "tasks.jsonl", "symbols": root / "symbols.jsonl", "manifest": root / "manifest.json",
            "tree": root / "tree", "dataset_file": root / "ds.json", "model": model_dir, "index": root / "index",
            "query_vectors": root / "qv", "cache_dir": root / "cache"}


def evaluate(job: dict, methods: list[str], out: Path, indexed: bool = True) -> dict:
    m = config.from_dict({"corpora": {"c": {"path": "."}}, "datasets": {"d": {"file": "d.json", "corpus": "c"}},
                          "arms": {"baseline": {}}, "systems": {"builtin": {"type": "builtin", "methods": methods}}})
    files = {k: str(v) for k, v in job.items() if k != "cache_dir"}
    if not indexed:
        files = {k: v for k, v in files.items() if k not in ("model", "index", "query_vectors")}
    cell = {"dataset": "d", "system": "builtin", "arm": "baseline", "inputs": files,
            "params": {"system_conf": m.systems["builtin"].conf, "env": {}, "top_k": 10},
            "outputs": {"run": str(out / "run.json")}}
    child = {"cell": cell, "cache_dir": str(job["cache_dir"])}
    proc = subprocess.run([sys.executable, "-c", CHILD, json.dumps(child), json.dumps(HEAVY)], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.splitlines()[-1])


def test_an_evaluation_loads_neither_bm25s_nor_tiktoken_nor_a_model(job, tmp_path):
    """BM25 is scored from the index's stored matrix, ASCII responses are counted without
    tiktoken's encoder, and the query vectors were embedded by their own job."""
    with_bm25 = evaluate(job, ["hybrid", "lexical", "semantic", "bm25"], tmp_path / "a")
    without = evaluate(job, ["hybrid", "lexical", "semantic"], tmp_path / "b")
    assert with_bm25["loaded"] == without["loaded"] == []
    assert with_bm25["ranks"]["bm25"] == [1, 1, 1, 1]
    assert {m: r for m, r in with_bm25["ranks"].items() if m != "bm25"} == without["ranks"]
    assert all(n > 20 for counts in with_bm25["tokens"].values() for n in counts)


def test_bm25_without_an_index_is_built_in_the_job_with_bm25s(job, tmp_path):
    """The one evaluation that needs bm25s: BM25 with no index to read it from."""
    run = evaluate(job, ["lexical", "bm25"], tmp_path, indexed=False)
    # bm25s brings importlib.metadata with it (its dependencies read their versions)
    assert run["loaded"] == ["bm25s", "importlib.metadata", "scipy"] and run["ranks"]["bm25"] == [1, 1, 1, 1]
