"""`crmatrix promote` and `crmatrix check --baseline --max-drop`, on real runs of the fake CLI
(tests/fakes/fake_search.py): eight queries whose gold the candidate arm ranks third instead
of first, so a drop is both large and beyond noise (p = 2/2^8)."""

import json
import sys
from pathlib import Path

import pytest

from crmatrix import config, integrity
from crmatrix.cli import main
from crmatrix.evaluation.cell import CellJob
from crmatrix.stages import build_system_index, evaluate_arm, extract_symbols, fetch_corpus, prepare_dataset

FAKE_CLI = [sys.executable, str(Path(__file__).parent / "fakes" / "fake_search.py")]
WORDS = [("parse", "config"), ("save", "value"), ("load", "file"), ("open", "socket"), ("close", "stream"),
         ("read", "frame"), ("write", "header"), ("merge", "settings")]


def corpus_text() -> str:
    """Per query `a b`: the gold a_b, and two symbols holding one of its words each."""
    return "".join(f"def {a}_{b}():\n    pass\n\n\ndef {a}_x{i}():\n    pass\n\n\ndef y{i}_{b}():\n    pass\n\n\n"
                   for i, (a, b) in enumerate(WORDS))


def dataset_file(path: Path, queries) -> Path:
    path.write_text(json.dumps([{"query": f"{a} {b}", "expected_symbol": f"{a}_{b}",
                                 "expected_file_suffix": "pkg/ops.py"} for a, b in queries]))
    return path


def prepare(root: Path, extra_file: bool = False) -> Path:
    src = root / "src"
    (src / "pkg").mkdir(parents=True)
    (src / "pkg" / "ops.py").write_text(corpus_text())
    if extra_file:
        (src / "pkg" / "more.py").write_text("def unrelated():\n    pass\n")
    dataset_file(root / "ds.json", WORDS)
    fetch_corpus.run("c", {"path": str(src)}, root / "tree", root / "manifest.json", [], {})
    extract_symbols.run(root / "tree", root / "manifest.json", root / "symbols.jsonl")
    prepare_dataset.run(root / "ds.json", "codelens", "c", root / "manifest.json", root / "symbols.jsonl",
                        root / "tasks.jsonl")
    return root


def system() -> dict:
    m = config.from_dict({"corpora": {"c": {"path": "."}}, "datasets": {"d": {"file": "d.json", "corpus": "c"}},
                          "arms": {"baseline": {}}, "systems": {"fake": {"type": "command", "options": {
                              "index": [*FAKE_CLI, "index", "{corpus}", "{index}"],
                              "search": [*FAKE_CLI, "search", "{index}", "{query}", "{k}"],
                              "hits": "data.symbols[]", "fields": {"symbol": "name", "path": "file",
                                                                   "start_line": "line"}}}}})
    return m.systems["fake"].conf


def evaluate(root: Path, out: Path, env: dict, dataset: Path | None = None) -> Path:
    """A run of the fake over `root`'s corpus, on its dataset or on `dataset` (another file)."""
    conf = system()
    tasks = root / "tasks.jsonl"
    if dataset is not None:
        tasks = out.with_suffix(".tasks.jsonl")
        prepare_dataset.run(dataset, "codelens", "c", root / "manifest.json", root / "symbols.jsonl", tasks)
    index = root / "index"
    if not index.exists():
        build_system_index.run(system="fake", system_conf=conf, tree=root / "tree", env={}, out=index,
                               home_dir=root / "home")
    inputs = {"tasks": tasks, "symbols": root / "symbols.jsonl", "manifest": root / "manifest.json",
              "tree": root / "tree", "dataset_file": dataset or root / "ds.json", "index": index}
    params = {"system_conf": conf, "env": env, "top_k": 10, "home_dir": root / "home"}
    evaluate_arm.run(CellJob("d", "fake", "a", inputs, params, {"run": out}))
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = prepare(tmp_path_factory.mktemp("baseline"))
    return {"release": evaluate(root, root / "release.json", {}),
            "worse": evaluate(root, root / "worse.json", {"FAKE_RANKING": "weakest-first"}),
            "one-miss": evaluate(root, root / "one-miss.json", {"FAKE_MODE": "crash-on:parse"}),
            "root": root}


def test_promote_keeps_pins_metrics_with_intervals_and_per_query_ranks(runs, tmp_path, capsys):
    out = tmp_path / "b.json"
    assert main(["promote", str(runs["release"]), "--out", str(out)]) == 0
    assert capsys.readouterr().out.strip() == (f"wrote {out}: d · fake (crmatrix 0.1.0) · a: "
                                               "search.mrr 1.000 [1.000, 1.000]")
    record = json.loads(out.read_text())
    run = json.loads(runs["release"].read_text())
    assert record["format"] == "crmatrix-baseline/1" and record["promoted_from"] == str(runs["release"])
    assert record["corpus"] == {k: run["provenance"]["corpus"][k] for k in ("name", "pin", "content_hash")}
    assert record["dataset"]["sha256"] == run["provenance"]["dataset"]["sha256"] and record["top_k"] == 10
    assert record["system"]["options"]["search"][-3:] == ["{index}", "{query}", "{k}"]
    search = record["methods"]["search"]
    assert search["metrics"]["mrr"] == 1.0 and search["ci"]["mrr"] == [1.0, 1.0] and "acc@5" in search["ci"]
    assert [q["rr"] for q in search["queries"]] == [1.0] * 8
    assert search["queries"][0] == {"task_id": "q000", "query_type": "uncategorized", "rank": 1,
                                    "relevant_ranks": [1], "n_relevant": 1, "rr": 1.0}


def check(runs, tmp_path, capsys, candidate: str, *gates: str) -> tuple[int, list[str]]:
    record = tmp_path / "b.json"
    main(["promote", str(runs["release"]), "--out", str(record)])
    capsys.readouterr()
    code = main(["check", str(runs[candidate]), "--baseline", str(record), *gates])
    return code, capsys.readouterr().out.splitlines()


def test_check_against_a_baseline_passes_the_same_ranking(runs, tmp_path, capsys):
    code, out = check(runs, tmp_path, capsys, "release", "--max-drop", "search.mrr=0.02")
    assert code == 0
    assert out == ["PASS search.mrr 1.000 → 1.000, Δ +0.000 [+0.000, +0.000], p=1.000 (paired randomization, "
                   "8 queries, ↑0 ↓0): within the max drop 0.02", f"{runs['release']}: 1 of 1 gates passed"]


def test_check_against_a_baseline_fails_a_real_drop_and_says_both_numbers(runs, tmp_path, capsys):
    code, out = check(runs, tmp_path, capsys, "worse", "--max-drop", "search.mrr=0.02",
                      "--max-drop", "search.acc@5=0.5", "--min", "search.mrr=0.2")
    assert code == 1
    assert out == [
        "FAIL search.mrr 1.000 → 0.333, Δ -0.667 [-0.667, -0.667], p=0.008 (paired randomization, 8 queries, "
        "↑0 ↓8): dropped more than 0.02 and p < 0.05",
        "PASS search.acc@5 1.000 → 1.000, Δ +0.000 [+0.000, +0.000], p=1.000 (paired randomization, 8 queries, "
        "↑0 ↓0): within the max drop 0.5",
        f"{runs['worse']}: 2 of 3 gates passed"]


def test_a_drop_within_noise_passes_and_says_so(runs, tmp_path, capsys):
    code, out = check(runs, tmp_path, capsys, "one-miss", "--max-drop", "search.mrr=0.02")
    assert code == 0
    assert out[0] == ("PASS search.mrr 1.000 → 0.875, Δ -0.125 [-0.375, +0.000], p=1.000 (paired randomization, "
                      "8 queries, ↑0 ↓1): dropped more than 0.02, but p ≥ 0.05: not beyond noise")


def test_check_refuses_a_run_on_another_corpus_or_dataset(runs, tmp_path, capsys):
    record = tmp_path / "b.json"
    main(["promote", str(runs["release"]), "--out", str(record)])
    other_corpus = evaluate(prepare(tmp_path / "corpus", extra_file=True), tmp_path / "c.json", {})
    other_dataset = evaluate(runs["root"], tmp_path / "d.json", {}, dataset_file(tmp_path / "seven.json", WORDS[:-1]))
    edited = json.loads(runs["release"].read_text())  # the same path corpus, its files edited since
    edited["provenance"]["corpus"]["content_hash"] = "0" * 64
    (tmp_path / "e.json").write_text(json.dumps(integrity.seal({k: v for k, v in edited.items() if k != "checksum"})))
    capsys.readouterr()
    for run, what in [(other_corpus, "corpus pin"), (tmp_path / "e.json", "corpus content hash"),
                      (other_dataset, "dataset sha256")]:
        assert main(["check", str(run), "--baseline", str(record), "--max-drop", "search.mrr=0.02"]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"crmatrix: {run}: not comparable with {record}: the {what} differs (baseline ")
        assert len(err.splitlines()) == 1
        if what == "corpus content hash":
            assert err.endswith(", run 000000000000…)\n")
    assert main(["check", str(runs["release"]), "--baseline", str(record),
                 "--max-drop", "search.identifier.mrr=0.1"]) == 2
    assert capsys.readouterr().err == ("crmatrix: search.identifier.mrr: the baseline has no identifier queries "
                                       "(query types: uncategorized)\n")
    assert main(["check", str(runs["release"]), "--max-drop", "search.mrr=0.02"]) == 2
    assert "--max-drop and --baseline go together" in capsys.readouterr().err
    assert main(["check", str(runs["release"]), "--baseline", str(runs["release"]),
                 "--max-drop", "search.mrr=0.1"]) == 2
    assert f"crmatrix: {runs['release']}: not a crmatrix baseline (expected 'format'" in capsys.readouterr().err


@pytest.mark.parametrize("entry, message", [
    ({"release": "builtin", "candidate": "builtin"}, "compare.p: compares builtin with itself"),
    ({"release": "nope", "candidate": "builtin@knob"}, "compare.p.release: 'nope' is not a system (known: builtin, "
     "peer)"),
    ({"release": "builtin", "candidate": "peer@knob"}, "compare.p.candidate: system peer does not take part in arm "
     "'knob' (its arms: baseline)"),
    ({"release": "builtin", "candidate": "builtin@knob", "max_drop": {"bm25.mrr": 0.1}}, "compare.p.max_drop.bm25.mrr: "
     "method 'bm25' is not one of both systems' methods (lexical)"),
    ({"release": "builtin", "candidate": "builtin@knob", "max_drop": {"lexical.latency_p95_ms": 5}},
     "compare.p.max_drop: max-drop gate 'lexical.latency_p95_ms=5': 'latency_p95_ms' is not a per-query metric "
     "(expected one of: mrr, mrr@10, acc@1, acc@3, acc@5, precision@1, recall@5, recall@10, recall@100, ndcg@10, "
     "map, map@10, coverage)"),
])
def test_a_bad_release_candidate_pair_is_one_line_naming_the_key(entry, message):
    from crmatrix import CrmatrixError

    with pytest.raises(CrmatrixError) as e:
        config.from_dict({"corpora": {"c": {"path": "."}}, "datasets": {"d": {"file": "d.json", "corpus": "c"}},
                          "arms": {"baseline": {}, "knob": {}}, "compare": {"p": entry},
                         "systems": {"builtin": {"type": "builtin", "methods": ["lexical"]},
                                     "peer": {"type": "builtin", "methods": ["lexical", "bm25"],
                                              "arms": ["baseline"]}}})
    assert str(e.value) == f"config: {message}"


def test_a_pair_gates_the_release_headline_mrr_by_default():
    m = config.from_dict({"corpora": {"c": {"path": "."}}, "datasets": {"d": {"file": "d.json", "corpus": "c"}},
                          "arms": {"baseline": {}, "knob": {}},
                          "compare": {"p": {"release": "b", "candidate": "b@knob"}},
                          "systems": {"b": {"type": "builtin", "methods": ["lexical", "bm25"]}}})
    assert m.compare == {"p": {"release": {"system": "b", "arm": "baseline"},
                                                   "candidate": {"system": "b", "arm": "knob"},
                                                   "max_drop": {"lexical.mrr": 0.02}}}
