"""The dataset audit: exact figures on a hand-made dataset, the CLI's `dataset show` and
`dataset audit`, and every shipped dataset against the figures datasets/README.md states."""

import json
import re
from pathlib import Path

import pytest
from conftest import ROOT

from crmatrix import cli
from crmatrix.datasets import audit, registry
from crmatrix.datasets.tasks import Task
from crmatrix.symbols import Symbol


def task(tid, query, qtype, name=None, path=None, **gold):
    g = {"type": "symbol", "symbol": name, "file_suffix": path} if name else gold
    return Task(tid, query, qtype, g, "c")


HAND = [
    # parseConfig -> parse, config: the query holds both (1.0)
    task("q0", "parse the config text", "natural_language", "parseConfig", "pkg/config.py"),
    # save_value -> save, value: `value` only (0.5, restating)
    task("q1", "persist a value under a key", "natural_language", "save_value", "pkg/store.py"),
    # load_value: neither word (0.0); the query's identifier `read_all` splits to read, all
    task("q2", "read_all entries of the store back", "natural_language", "load_value", "pkg/store.py"),
    # HTTPServer -> http, server: `server` (0.5)
    task("q3", "start the server loop", "natural_language", "HTTPServer", "pkg/net.py"),
    # identifiers name their target on purpose: not counted for the flag
    task("q4", "parseConfig", "identifier", "parseConfig", "pkg/config.py"),
    # same words as q3 in another order and case: a near duplicate (token set 100)
    task("q5", "Start the server LOOP", "short_phrase", "HTTPServer", "pkg/net.py"),
    # file-level gold names no symbol
    task("q6", "where are sessions kept", "natural_language", file_set=["pkg/store.py", "pkg/session.py"]),
]


def test_exact_figures_on_a_hand_made_dataset():
    a = audit.audit(HAND)
    o = a["name_overlap"]
    assert [q["overlap"] for q in o["per_query"]] == [1.0, 0.5, 0.0, 0.5, 1.0, 0.5, None]
    # 4 natural-language queries name a symbol; 3 restate it (>= 0.5): 75 % > 50 %, flagged
    assert (o["natural_language_named"], o["restating"], o["restating_share"], o["all_words"], o["any_word"]) == (
        4, 3, 0.75, 1, 3)
    assert o["mean"] == 0.5 and a["flagged"] is True
    assert a["query_types"] == {"identifier": 1, "natural_language": 5, "short_phrase": 1}
    assert [(p["a"], p["b"], p["score"]) for p in a["near_duplicates"]["pairs"]] == [("q3", "q5", 100.0)]
    assert a["gold_files"] == {"distinct": 4, "tasks": 7, "per_task": 4 / 7, "top": [
        {"path": "pkg/store.py", "tasks": 3}, {"path": "pkg/config.py", "tasks": 2}, {"path": "pkg/net.py", "tasks": 2},
        {"path": "pkg/session.py", "tasks": 1}]}
    text = audit.to_text(a, "hand")
    assert ("7 tasks. **Flagged**: 3 of 4 natural-language queries restate the gold's name; "
            "the set flatters lexical") in text
    assert "| q3 | q5 | 100 | start the server loop | Start the server LOOP |" in text
    assert "Gold spread: 4 distinct files over 7 tasks (0.57 per task)." in text
    # one restating query fewer: 2 of 4 is not more than half
    assert audit.audit([HAND[0], HAND[1], HAND[2], task("q3", "run it", "natural_language", "HTTPServer", "n.py")]
                       )["flagged"] is False
    assert audit.audit(HAND[6:])["flagged"] is None


def test_a_short_query_inside_a_long_one_is_no_near_duplicate():
    long = task("a", "serve one connection and start a graceful shutdown of it with the signal", "natural_language")
    short = task("b", "with_graceful_shutdown", "identifier")
    assert audit.near_duplicates([long, short]) == []
    close = task("c", "serve a connection and start graceful shutdown of it with the signal", "natural_language")
    assert [p["b"] for p in audit.near_duplicates([long, close])] == ["c"]


CORPUS = {
    "pkg/config.py": "def parse_config(text):\n    return dict(line.split('=') for line in text.splitlines())\n",
    "pkg/store.py": "class Store:\n    def save_value(self, key, value):\n        self.data[key] = value\n",
    "notes.bin": "\0binary",
}
ROWS = [
    {"query": "read settings text into a mapping", "expected_symbol": "parse_config",
     "expected_file_suffix": "pkg/config.py", "query_type": "natural_language"},
    {"query": "save value", "expected_symbol": "save_value", "expected_file_suffix": "store.py",
     "query_type": "short_phrase"},
    {"query": "Store", "expected_symbol": "Store", "expected_file_suffix": "pkg/store.py", "query_type": "identifier"},
]


@pytest.fixture
def corpus(tmp_path):
    for rel, text in CORPUS.items():
        (tmp_path / "src" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "src" / rel).write_text(text)
    (tmp_path / "ds.json").write_text(json.dumps(ROWS))
    return tmp_path


def test_dataset_show_prints_the_tasks_and_the_summary(corpus, capsys):
    assert cli.main(["dataset", "show", "codelens", str(corpus / "ds.json"), "--corpus", str(corpus / "src")]) == 0
    out, err = capsys.readouterr()
    assert [json.loads(line) for line in out.splitlines()] == [
        {"task_id": "q000", "query": "read settings text into a mapping", "query_type": "natural_language",
         "gold": {"type": "symbol", "symbol": "parse_config", "file_suffix": "pkg/config.py"}},
        {"task_id": "q001", "query": "save value", "query_type": "short_phrase",
         "gold": {"type": "symbol", "symbol": "save_value", "file_suffix": "store.py"}},
        {"task_id": "q002", "query": "Store", "query_type": "identifier",
         "gold": {"type": "symbol", "symbol": "Store", "file_suffix": "pkg/store.py"}}]
    assert err == f"{corpus / 'ds.json'}: format codelens: 3 tasks, 0 dropped; split all: 3 tasks\n"
    # the held-out test split of 3 tasks: dev takes round(0.6) = 1
    assert cli.main(["dataset", "show", "codelens", str(corpus / "ds.json"), "--corpus", str(corpus / "src"),
                     "--split", "test", "--seed", "5"]) == 0
    out, err = capsys.readouterr()
    assert len(out.splitlines()) == 2 and err.endswith("split test: 2 tasks\n")
    # a row the corpus cannot answer stops with one line
    (corpus / "ds.json").write_text(json.dumps([{**ROWS[0], "expected_file_suffix": "pkg/other.py"}]))
    assert cli.main(["dataset", "show", "codelens", str(corpus / "ds.json"), "--corpus", str(corpus / "src")]) == 2
    assert capsys.readouterr().err == (f"crmatrix: {corpus / 'ds.json'}: row 0: field 'expected_file_suffix' "
                                       "'pkg/other.py' matches no file of corpus 'src'\n")


def test_dataset_audit_prints_text_or_json(corpus, capsys):
    args = ["dataset", "audit", str(corpus / "ds.json"), "--corpus", str(corpus / "src")]
    assert cli.main(args) == 0
    out = capsys.readouterr().out
    assert out.startswith("# Dataset audit — ds\n\n3 tasks. Not flagged: 0 of 1 natural-language queries restate")
    assert cli.main([*args, "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["dataset"] == "ds" and got["flagged"] is False and got["gold_files"]["distinct"] == 3
    assert [q["overlap"] for q in got["name_overlap"]["per_query"]] == [0.0, 1.0, 1.0]


def readme_figures() -> dict[str, tuple[int, int]]:
    """datasets/README.md's "name tokens verbatim (all / any)" column, per file."""
    text = (ROOT / "datasets" / "README.md").read_text()
    return {m[1]: (int(m[2]), int(m[3])) for m in re.finditer(r"^\| `([\w-]+\.json)` \|[^|]+\|[^|]+\| (\d+) / (\d+) of",
                                                              text, flags=re.M)}


def corpus_of(rows: list[dict]) -> tuple[dict, list[Symbol]]:
    """A corpus holding exactly what a codelens file names (each suffix a file, each symbol in it)."""
    paths = sorted({r["expected_file_suffix"] for r in rows})
    syms = [Symbol(r["expected_symbol"], "function", "", r["expected_file_suffix"], "python", 1, 2, "", "", "")
            for r in rows]
    return {"files": [{"path": p} for p in paths]}, syms


def repoqa_tasks(path: Path, tmp_path: Path) -> list:
    """Every repository of a RepoQA file written out as its corpus, and its needles' tasks."""
    from crmatrix.corpora.tree import select_files
    from crmatrix.datasets import repoqa
    from crmatrix.symbols.extract import extract_files

    tasks = []
    for entries in json.loads(path.read_text()).values():
        for e in entries:
            spec = {"file": str(path), "repo": e["repo"]}
            work = tmp_path / e["repo"].replace("/", "+")
            (work / "src").mkdir(parents=True)
            repoqa.write_corpus(spec, work / "src")
            part = select_files(work / "src", work / "tree", ["**"], [])
            syms = extract_files(work / "tree", [f["path"] for f in part["files"] if f["language"]])
            tasks += registry.load(path, "repoqa", "c", {"pin": {"kind": "repoqa", "repoqa": spec}, **part}, syms)
    return tasks


@pytest.mark.parametrize("path", sorted((ROOT / "datasets").glob("*.json")), ids=lambda p: p.name)
def test_the_audit_runs_on_every_shipped_dataset(path: Path, tmp_path: Path):
    rows = json.loads(path.read_text())
    if isinstance(rows, dict):  # the RepoQA fixture: descriptions of behaviour, never the needle's name
        tasks = repoqa_tasks(path, tmp_path)
        a = audit.audit(tasks)
        assert (a["n"], a["name_overlap"]["all_words"], a["flagged"]) == (9, 0, False)
        return
    fmt = "callgraph" if "caller" in rows[0] else "codelens"
    if fmt == "callgraph":
        syms = [Symbol(n, "function", "", r["file"], "python", 1, 2, "", "", "")
                for r in rows for n in (r["caller"], r["callee"])]
        tasks = registry.load(path, fmt, "c", {"files": []}, syms)
    else:
        tasks = registry.load(path, fmt, "c", *corpus_of(rows))
    a = audit.audit(tasks)
    assert a["n"] == len(tasks) and sum(a["query_types"].values()) == len(tasks)
    if fmt == "callgraph":  # its queries are symbol names, of no natural-language type: nothing to judge
        assert a["flagged"] is None
        return
    o = a["name_overlap"]
    assert (o["all_words"], o["any_word"]) == readme_figures()[path.name]
    assert a["flagged"] is False  # the shipped sets ask about behaviour


def test_an_audit_page_names_the_dataset_with_its_note(tmp_path):
    from crmatrix import atomic
    from crmatrix.stages import audit_dataset

    atomic.write_jsonl(tmp_path / "t.jsonl", [t.to_dict() for t in HAND])
    out = [tmp_path / f"a.{ext}" for ext in ("json", "md", "html")]
    audit_dataset.run(tmp_path / "t.jsonl", "gold", *out, note="oracle: not comparable")
    assert out[1].read_text().startswith("# Dataset audit — gold (oracle: not comparable)\n")
    assert "<title>Dataset audit — gold (oracle: not comparable)</title>" in out[2].read_text()
    assert json.loads(out[0].read_text())["dataset"] == "gold"
    audit_dataset.run(tmp_path / "t.jsonl", "plain", *out)
    assert out[1].read_text().startswith("# Dataset audit — plain\n")


def test_definition_gold_spreads_over_the_definitions_files():
    gold = {"type": "definitions", "ids": ["pandas.reference.api.pandas.dataframe.where", "x.y"],
            "definitions": [["pandas/core/frame.py", "where", 6, 8], ["pandas/core/frame.py", "where", 10, 11],
                            ["pandas/core/generic.py", "add_prefix", 2, 3]]}
    assert audit.gold_files(gold) == ["pandas/core/frame.py", "pandas/core/generic.py"]
