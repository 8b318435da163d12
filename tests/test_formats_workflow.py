"""Public benchmarks through Snakemake: SWE-QA's flask questions on the pinned flask commit
(from the shared bundle) and the RepoQA fixture's corpus, scored by the builtin engine."""

import hashlib
import json
import os
import re

import pytest
import yaml
from conftest import ROOT, SHARED, needs_shared, snakemake


@pytest.mark.slow
@needs_shared
def test_swe_qa_flask_and_repoqa_in_the_matrix_with_recall_ndcg_and_intervals(tmp_path):
    cfg = {
        "git_mirrors": [str(SHARED / "corpora")],
        "corpora": {
            "flask": {"git": "https://github.com/pallets/flask", "commit": "85c5d93cbd049c4bd0679c36fd1ddcae8c37b642"},
            "rq": {"repoqa": {"file": str(ROOT / "datasets/repoqa-fixture.json"),
                              "repo": "crmatrix-fixtures/tinyqueue"}},
        },
        "datasets": {
            "swe-qa-flask": {"file": str(SHARED / "data/swe-qa/flask.jsonl"), "corpus": "flask", "format": "swe-qa"},
            "rq": {"file": str(ROOT / "datasets/repoqa-fixture.json"), "corpus": "rq", "format": "repoqa"},
        },
        # no embedding methods: no model and no index, so the run takes seconds
        "systems": {"builtin": {"type": "builtin", "methods": ["lexical", "bm25"]}},
        "headline_method": "bm25",
        "arms": {"baseline": {}, "knob": {"CODELENS_RANK_SPARSE_TERM_WEIGHT": "1"}},
    }
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(cfg))
    snakemake(tmp_path, "--configfile", str(tmp_path / "config.yaml"), "--cores", "2", "results/matrix/phase-matrix.md")
    m = json.loads((tmp_path / "results/matrix/phase-matrix.json").read_text())
    bench = {b["dataset"]: b for b in m["benchmarks"]}
    swe = bench["swe-qa-flask"]
    assert (swe["format"], swe["method"], swe["metrics"]) == ("swe-qa", "bm25", ["recall@5", "recall@10", "ndcg@10"])
    assert swe["dropped"] == {"tasks": 48, "dropped": 345, "by_reason": {
        "absent citation": 4, "ambiguous citation": 9, "ambiguous name": 64, "common name": 11,
        "unresolved name": 257}, "gold": {"files": 122, "by_name_alone": 15}}
    base = swe["arms"]["baseline"]
    means = {k: round(v["mean"], 3) for k, v in base.items()}
    assert means == {"recall@5": 0.721, "recall@10": 0.817, "ndcg@10": 0.756}
    assert all(v["ci_low"] < v["mean"] < v["ci_high"] for v in base.values())
    assert bench["rq"]["metrics"] == ["pass@1", "recall@5", "recall@10", "ndcg@10"]
    assert round(bench["rq"]["arms"]["baseline"]["pass@1"]["mean"], 3) == 0.6
    # the RepoQA corpus is written out of its file by its format's rule; flask is fetched
    assert sorted(p.parent.name + "/" + p.stem for p in (tmp_path / "logs").glob("*_corpus/*.log")) == [
        "fetch_corpus/flask", "write_corpus/rq"]
    md = (tmp_path / "results/matrix/phase-matrix.md").read_text()
    assert ("48 tasks; 345 rows or citations dropped: 4 absent citation; 9 ambiguous citation; 64 ambiguous name; "
            "11 common name; 257 unresolved name; 15 of 122 gold files cited by a name alone (12%)") in md
    assert "| baseline | 0.721 [" in md and "| arm | pass@1 | recall@5 | recall@10 | ndcg@10 |" in md
    # file-level gold: the run ranks files, and the qrels hold the cited files
    qrels = (tmp_path / "results/trec/swe-qa-flask.qrels").read_text().splitlines()
    assert qrels[:3] == ["q000 0 src/flask/json/__init__.py 1", "q000 0 src/flask/json/provider.py 1",
                         "q000 0 tests/test_json.py 1"]
    summary = json.loads((tmp_path / "results/datasets/swe-qa-flask.summary.json").read_text())
    assert summary["drops"][0] == {"row": 0, "reason": "absent citation", "detail": "app.json: no such file"}
    log = (tmp_path / "logs/prepare_dataset/swe-qa-flask.log").read_text()
    assert ("48 tasks, 345 dropped; 4 absent citation; 9 ambiguous citation; 64 ambiguous name; "
            "11 common name; 257 unresolved name") in log
    assert "gold: files 122, by_name_alone 15" in log


def test_a_repeated_repoqa_needle_is_dropped_and_an_older_copy_of_the_file_is_seen(tmp_path):
    """One function asked for twice (another description) would count double: dropped with its
    reason. And the file is keyed by its content: an older copy of it restored with an older
    mtime writes the corpus out of it again, and loads the dataset again."""
    data = json.loads((ROOT / "datasets/repoqa-fixture.json").read_text())
    entry = data["python"][0]
    entry["needles"].append({**entry["needles"][0], "description": "Wait longer after each failed attempt."})
    file = tmp_path / "rq.json"
    file.write_text(json.dumps(data))
    cfg = {"corpora": {"rq": {"repoqa": {"file": str(file), "repo": "crmatrix-fixtures/tinyqueue"}}},
           "datasets": {"rq": {"file": str(file), "corpus": "rq", "format": "repoqa"}},
           "systems": {"builtin": {"type": "builtin", "methods": ["lexical"]}}, "headline_method": "lexical",
           "arms": {"baseline": {}}}
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(cfg))

    def make(*args):
        return snakemake(tmp_path, "--configfile", str(tmp_path / "config.yaml"), "--cores", "1", *args,
                         "results/datasets/rq.summary.json")

    make()
    summary = json.loads((tmp_path / "results/datasets/rq.summary.json").read_text())
    assert (summary["tasks"], summary["dropped_by_reason"]) == (5, {"repeated needle": 1})
    assert summary["drops"] == [{"row": 5, "reason": "repeated needle",
                                 "detail": "_backoff_delay: tinyqueue/queue.py:8 is needle 0's function, under another "
                                           "description"}]
    assert "dropped row 5: repeated needle: _backoff_delay" in (tmp_path / "logs/prepare_dataset/rq.log").read_text()

    made = (tmp_path / "results/corpora/rq/manifest.json").stat().st_mtime
    entry["content"]["tinyqueue/clock.py"] += "\n\ndef later():\n    return 1\n"
    file.write_text(json.dumps(data))
    os.utime(file, (made - 3600, made - 3600))
    assert sorted(re.findall(r"^(?:local)?rule (\w+):", make("-n").stdout, flags=re.M)) == [
        "extract_symbols", "prepare_dataset", "write_corpus"]
    make()
    manifest = json.loads((tmp_path / "results/corpora/rq/manifest.json").read_text())
    clock = next(f for f in manifest["files"] if f["path"] == "tinyqueue/clock.py")
    assert clock["sha256"] == hashlib.sha256(entry["content"]["tinyqueue/clock.py"].encode()).hexdigest()
