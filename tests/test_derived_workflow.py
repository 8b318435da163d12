"""Derived datasets through Snakemake: two of them on one tiny corpus, scored on its docs-withheld
view, which is made, extracted and indexed once for both."""

import hashlib
import json
import re

import yaml
from conftest import by_hand, snakemake
from test_derived import PYTHON, write


@by_hand
def test_two_derived_datasets_share_one_view_through_all(tmp_path):
    write(tmp_path / "local", PYTHON)
    cfg = {
        "corpora": {"fx": {"path": "local", "language": "python"}},
        "datasets": {"fx-derived": {"format": "derived", "corpus": "fx", "archetype": "library"},
                     "fx-two": {"format": "derived", "corpus": "fx", "max_queries": 2, "seed": 1}},
        "arms": {"baseline": {}, "knob": {"CODELENS_RANK_SPARSE_TERM_WEIGHT": "1"}},
        # no embedding methods: no model and no index, so the run takes seconds
        "systems": {"builtin": {"type": "builtin", "methods": ["lexical", "bm25"]}},
        "headline_method": "bm25",
    }
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(cfg))

    def run(*args):
        return snakemake(tmp_path, "--configfile", str(tmp_path / "config.yaml"), "--cores", "2", *args).stdout

    plan = run("-n", "all")
    jobs = dict(re.findall(r"^(\w+)\s+(\d+)$", plan.split("Job stats:")[1].split("total")[0], flags=re.M))
    assert (jobs["fetch_corpus"], jobs["withhold_docs"], jobs["extract_symbols"]) == ("1", "1", "2")
    assert (jobs["prepare_dataset"], jobs["evaluate_arm"]) == ("2", "4")
    run("all")

    view = json.loads((tmp_path / "results/corpora/fx~nodocs/manifest.json").read_text())
    source = json.loads((tmp_path / "results/corpora/fx/manifest.json").read_text())
    assert view["view"] == {"kind": "nodocs", "of": "fx", "content_hash": source["content_hash"]}
    assert view["pin"] == source["pin"] and view["content_hash"] != source["content_hash"]
    assert "Read the settings" not in (tmp_path / "results/corpora/fx~nodocs/tree/src/pkg/io/reader.py").read_text()

    tasks = [json.loads(line) for line in (tmp_path / "results/datasets/fx-derived.jsonl").read_text().splitlines()]
    assert [(t["query"], t["gold"]["symbol"], t["corpus"]) for t in tasks] == [
        ("Pick the mirror that answered fastest, e.g. the local one", "choose_mirror", "fx~nodocs"),
        ("Read the settings file and merge it over the defaults", "load_settings", "fx~nodocs"),
        ("A HTTPConnection pool that keeps cookies between requests", "Session", "fx~nodocs"),
        ("Call again after a connection error, waiting longer each time", "retry", "fx~nodocs")]
    two = (tmp_path / "results/datasets/fx-two.jsonl").read_text().splitlines()
    assert len(two) == 2
    summary = json.loads((tmp_path / "results/datasets/fx-two.summary.json").read_text())
    assert summary["sample"] == {"max_queries": 2, "seed": 1, "candidates": 4, "sampled": 2}

    r = json.loads((tmp_path / "results/runs/fx-derived/builtin/baseline.json").read_text())
    prov = r["provenance"]
    assert prov["corpus"] == {"name": "fx~nodocs", "pin": source["pin"], "content_hash": view["content_hash"],
                              "language": "python"}
    rows = (tmp_path / "results/datasets/fx-derived.jsonl").read_bytes()
    assert prov["dataset"]["file"] == "results/datasets/fx-derived.jsonl"
    assert prov["dataset"]["sha256"] == hashlib.sha256(rows).hexdigest()
    queries = r["methods"]["bm25"]["queries"]
    assert [q["query"] for q in queries] == [t["query"] for t in tasks]
    assert [q["rank"] for q in queries] == [1, 1, None, 1]

    md = (tmp_path / "results/matrix/phase-matrix.md").read_text()
    assert ("4 tasks; 6 rows or citations dropped: 2 ambiguous gold; 1 names the gold; 2 repeated query; "
            "1 too short") in md
    audit = json.loads((tmp_path / "results/audit/fx-derived.json").read_text())
    assert (audit["n"], audit["name_overlap"]["all_words"]) == (4, 0)
    assert "Nothing to be done" in run("-n", "all")
    # the corpus's slice holds the datasets scored on its view
    assert "results/runs/fx-two/builtin/knob.json" in run("-n", "corpus_fx", "--forceall")
