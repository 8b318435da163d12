"""The phase matrix as `collect_matrix` writes it from real runs: which method heads a row,
and the cells whose arm was clamped or whose queries failed."""

import json

import pytest

from crmatrix import systems
from crmatrix.stages import collect_matrix, evaluate_arm, extract_symbols, fetch_corpus, prepare_dataset
from crmatrix.hits import Hit

SOURCE = ("def slugify(title):\n    return title.lower()\n\n\n"
          "class Cache:\n    def get(self, key):\n        return self.items[key]\n")
DATASET = [
    {"query": "slugify", "expected_symbol": "slugify", "expected_file_suffix": "lib/util.py"},
    {"query": "cache get", "expected_symbol": "get", "expected_file_suffix": "lib/util.py"},
    {"query": "Cache", "expected_symbol": "Cache", "expected_file_suffix": "lib/util.py"},
]


class NameLookup:
    """A third-party system: a hit for the symbol named exactly like the query, under two
    methods listed out of alphabetical order; a query holding a space makes it raise."""

    METHODS = ("first", "exact")

    def __init__(self, ctx):
        self.symbols = ctx.symbols

    def search(self, query, method, k):
        if " " in query:
            raise RuntimeError("cannot parse a query with spaces")
        return [Hit(s.path, s.name, s.kind, s.start_line, s.end_line, 1.0) for s in self.symbols if s.name == query]


@pytest.fixture
def stage(tmp_path, monkeypatch):
    """Runs the stages a user's matrix runs, up to one run per (system, arm)."""
    monkeypatch.setitem(systems._REGISTERED, "lookup", NameLookup)
    src = tmp_path / "proj"
    (src / "lib").mkdir(parents=True)
    (src / "lib" / "util.py").write_text(SOURCE)
    (tmp_path / "ds.json").write_text(json.dumps(DATASET))
    r = tmp_path / "results"
    fetch_corpus.run("proj", {"path": str(src)}, r / "tree", r / "manifest.json", [], {})
    extract_symbols.run(r / "tree", r / "manifest.json", r / "symbols.jsonl")
    prepare_dataset.run(tmp_path / "ds.json", "codelens", "proj", r / "manifest.json", r / "symbols.jsonl",
                        r / "tasks.jsonl")

    def run(system: str, conf: dict, arm: str, env: dict):
        systems.check_system_config(system, conf)
        out = r / "runs" / system / f"{arm}.json"
        evaluate_arm.run(tasks=r / "tasks.jsonl", symbols=r / "symbols.jsonl", manifest=r / "manifest.json",
                         tree=r / "tree", dataset_file=tmp_path / "ds.json", out=out, dataset="ds",
                         system=system, system_conf=conf, arm=arm, env=env, top_k=10)
        return out

    def collect(runs):
        m = collect_matrix.run(runs, "baseline", "hybrid", ["baseline", "wide"], {}, r / "m.json", r / "m.md")
        assert json.loads((r / "m.json").read_text()) == json.loads(json.dumps(m))
        return m, (r / "m.md").read_text().splitlines()

    return run, collect


def table_row(md_lines, system):
    return next(line for line in md_lines if line.startswith(f"| ds | {system} |"))


def test_a_clamped_arm_is_flagged_and_the_headline_is_the_first_listed_method(stage):
    run, collect = stage
    conf = {"type": "builtin", "methods": ["lexical", "bm25"]}  # no hybrid; bm25 sorts first in the run JSON
    runs = [run("builtin", dict(conf), "baseline", {}),
            run("builtin", dict(conf), "wide", {"CODELENS_RANK_SPARSE_TERM_WEIGHT": "1",
                                                "CODELENS_RANK_SPARSE_THRESHOLD": "500"})]
    assert list(json.loads(runs[0].read_text())["methods"]) == ["bm25", "lexical"]
    m, md = collect(runs)
    (row,) = m["rows"]
    assert row["method"] == "lexical"
    assert (row["cells"]["baseline"]["clamped"], row["cells"]["baseline"]["failed"]) == ([], 0)
    assert row["cells"]["wide"]["clamped"] == ["CODELENS_RANK_SPARSE_THRESHOLD=500 clamped to 90"]
    assert row["cells"]["wide"]["failed"] == 0
    assert table_row(md, "builtin") == (
        "| ds | builtin | lexical | python | 3 | 1.000 [1.00, 1.00] | 1.000 [1.00, 1.00]"
        "<br>Δ +0.000 +0.0% flat<br>p=1.000 ↑0 ↓0<br>⚠ clamped |")


def test_failed_queries_are_counted_in_the_cell(stage):
    run, collect = stage
    runs = [run("lookup", {"type": "lookup"}, arm, {}) for arm in ("baseline", "wide")]
    m, md = collect(runs)
    (row,) = m["rows"]
    assert row["method"] == "first"  # the system's first method, not the alphabetical "exact"
    assert {arm: (c["failed"], c["clamped"]) for arm, c in row["cells"].items()} == {
        "baseline": (1, []), "wide": (1, [])}
    assert table_row(md, "lookup") == (
        "| ds | lookup | first | python | 3 | 0.667 [0.00, 1.00]<br>⚠ 1 failed (1 crash) | 0.667 [0.00, 1.00]"
        "<br>Δ +0.000 +0.0% flat<br>p=1.000 ↑0 ↓0<br>⚠ 1 failed (1 crash) |")
