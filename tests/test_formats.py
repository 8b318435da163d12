"""The public benchmark formats: RepoQA (fixture), SWE-QA / SWE-QA-Pro, DS-1000 (shared data)."""

import json

import pytest
from conftest import ROOT, SHARED, by_hand, needs_shared

from crmatrix import CrmatrixError
from crmatrix.corpora import pins
from crmatrix.corpora.tree import select_files
from crmatrix.datasets import astequiv, registry, relevance
from crmatrix.datasets.citations import resolve_path
from crmatrix.datasets.records import read_records
from crmatrix.hits import Hit
from crmatrix.symbols.extract import extract_documents, extract_files

FIXTURE = ROOT / "datasets" / "repoqa-fixture.json"
FLASK_COMMIT = "85c5d93cbd049c4bd0679c36fd1ddcae8c37b642"
SWE_QA = SHARED / "data" / "swe-qa" / "flask.jsonl"
DS1000 = SHARED / "data" / "ds1000" / "ds1000_docs.jsonl"


def corpus_of(tmp_path, kind, spec, src=None):
    """A corpus as the fetch or write stage makes it: files selected into a tree, its manifest and symbols."""
    src = src or tmp_path / "src"
    fmt = registry.written_by({kind: spec})
    if fmt is not None:
        src.mkdir()
        fmt.write_corpus(spec, src)
    part = select_files(src, tmp_path / "tree", ["**"], [])
    manifest = {"pin": {"kind": kind, **spec} if fmt is None else {"kind": kind, kind: spec}, **part}
    paths = [f["path"] for f in part["files"]]
    symbols = (extract_documents(tmp_path / "tree", paths) if kind == "ds1000"
               else extract_files(tmp_path / "tree",
                                  [p for f, p in zip(part["files"], paths, strict=True) if f["language"]]))
    return manifest, symbols


# --- RepoQA ---------------------------------------------------------------------------------------

def test_repoqa_fixture_python_repo(tmp_path):
    spec = {"file": str(FIXTURE), "repo": "crmatrix-fixtures/tinyqueue"}
    manifest, symbols = corpus_of(tmp_path, "repoqa", spec)
    assert [f["path"] for f in manifest["files"]] == ["tinyqueue/__init__.py", "tinyqueue/clock.py",
                                                      "tinyqueue/queue.py", "tinyqueue/store.py",
                                                      "tinyqueue/vendor/retry.py"]
    loaded = registry.load_all(FIXTURE, "repoqa", "rq", manifest, symbols)
    assert loaded.dropped == []
    assert [(t.task_id, t.gold["name"], t.stratum) for t in loaded.tasks] == [
        ("n000", "_backoff_delay", "crmatrix-fixtures/tinyqueue"), ("n001", "pop_ready", "crmatrix-fixtures/tinyqueue"),
        ("n002", "load_jobs", "crmatrix-fixtures/tinyqueue"), ("n003", "compact", "crmatrix-fixtures/tinyqueue"),
        ("n004", "parse_duration", "crmatrix-fixtures/tinyqueue")]
    backoff = loaded.tasks[0].gold
    # the vendored copy has a decorator, other comments and another layout: the same function
    assert backoff["equivalent"] == [["tinyqueue/queue.py", "_backoff_delay", 8, 13],
                                     ["tinyqueue/vendor/retry.py", "_backoff_delay", 6, 13]]
    assert loaded.tasks[1].gold["equivalent"] == [["tinyqueue/queue.py", "pop_ready", 29, 37]]
    assert relevance.is_relevant(backoff, Hit("tinyqueue/vendor/retry.py", "_backoff_delay", "function", 7, 13, 1.0))
    assert not relevance.is_relevant(backoff, Hit("tinyqueue/queue.py", "push", "method", 25, 27, 1.0))
    assert relevance.relevant_ids(backoff, symbols) == ["tinyqueue/queue.py:8:_backoff_delay",
                                                        "tinyqueue/vendor/retry.py:6:_backoff_delay"]


def test_repoqa_fixture_typescript_repo_and_dropped_needles(tmp_path):
    data = json.loads(FIXTURE.read_text())
    entry = data["typescript"][0]
    assert len(entry["needles"]) == 4 and sum(len(e["needles"]) for v in data.values() for e in v) == 9
    entry["needles"][1]["start_line"] += 1  # `area`'s lines cut: no whole function there
    entry["needles"][2]["path"] = "src/missing.ts"
    bad = tmp_path / "rq.json"
    bad.write_text(json.dumps(data))
    manifest, symbols = corpus_of(tmp_path, "repoqa", {"file": str(bad), "repo": "crmatrix-fixtures/geomkit"})
    loaded = registry.load_all(bad, "repoqa", "geo", manifest, symbols)
    assert [t.gold["name"] for t in loaded.tasks] == ["normalize", "mergeBoxes"]
    assert loaded.summary("repoqa")["dropped_by_reason"] == {"needle file not in the corpus": 1,
                                                             "no function at the needle's lines": 1}
    assert loaded.dropped[0]["detail"] == ("area: src/vector.ts:19-26 holds no function 'area' "
                                           "(whitespace, comments and decorators aside)")


def test_repoqa_bad_needle_and_unknown_repo(tmp_path):
    data = json.loads(FIXTURE.read_text())
    data["python"][0]["needles"][3]["end_line"] = 0
    bad = tmp_path / "rq.json"
    bad.write_text(json.dumps(data))
    manifest, symbols = corpus_of(tmp_path, "repoqa", {"file": str(FIXTURE), "repo": "crmatrix-fixtures/tinyqueue"})
    with pytest.raises(CrmatrixError) as e:
        registry.load(bad, "repoqa", "rq", manifest, symbols)
    assert str(e.value) == (f"{bad}: python[0] (crmatrix-fixtures/tinyqueue): needle 3: field 'end_line' must be a "
                            "line number >= 1, got 0")
    with pytest.raises(CrmatrixError, match=r"no repository 'nope/nope' \(it has: crmatrix-fixtures/geomkit, "
                                            r"crmatrix-fixtures/tinyqueue\)"):
        registry.FORMATS.get("repoqa").write_corpus({"file": str(FIXTURE), "repo": "nope/nope"}, tmp_path)


def test_ast_equivalence_ignores_layout_comments_and_decorators_not_code(tmp_path):
    files = {
        "a.py": b"def f(x, y):\n    # add\n    return x + y\n",
        "b.py": b"@cache\ndef f(x,\n      y):\n    return x+y  # sum\n",
        "c.py": b"def f(x, z):\n    return x + z\n",
        "d.py": b"def f(x, y):\n    return x + 1\n",
    }
    fp = astequiv.Fingerprinter(files.__getitem__)
    a = fp.of("a.py", 1, 3)
    assert fp.of("b.py", 1, 4) == a
    assert fp.of("c.py", 1, 2) != a and fp.of("d.py", 1, 2) != a
    assert fp.of("notes.txt", 1, 1) is None


# --- SWE-QA ---------------------------------------------------------------------------------------

PATHS = ["src/flask/app.py", "src/flask/sansio/app.py", "src/flask/json/provider.py", "tests/test_json.py"]


@pytest.mark.parametrize("cited,found,candidates", [
    ("src/flask/json/provider.py", "src/flask/json/provider.py", ["src/flask/json/provider.py"]),
    ("./tests/test_json.py", "tests/test_json.py", ["tests/test_json.py"]),
    ("json/provider.py", "src/flask/json/provider.py", ["src/flask/json/provider.py"]),
    ("sansio/app.py", "src/flask/sansio/app.py", ["src/flask/sansio/app.py"]),
    ("provider.py", "src/flask/json/provider.py", ["src/flask/json/provider.py"]),
    ("app.py", None, ["src/flask/app.py", "src/flask/sansio/app.py"]),
    ("lib/json/provider.py", "src/flask/json/provider.py", ["src/flask/json/provider.py"]),  # by basename
    ("views.py", None, []),
])
def test_citations_resolve_by_path_then_suffix_then_basename(cited, found, candidates):
    assert resolve_path(cited, PATHS) == (found, candidates)


def sweqa_manifest(repo="https://github.com/pallets/flask", commit=FLASK_COMMIT):
    return {"files": [{"path": p} for p in PATHS], "pin": {"kind": "git", "git": repo, "commit": commit}}


def test_swe_qa_pro_keeps_its_repository_and_commit(tmp_path):
    rows = [
        {"repo": "pallets/flask", "commit_id": FLASK_COMMIT[:7], "cluster": "c", "qa_type": "where",
         "question": "Where is JSON dumped?", "answer": "In `json/provider.py` (lines 166-179) and `app.py`."},
        {"repo": "psf/requests", "commit_id": "46e939b", "qa_type": "what", "question": "q2", "answer": "`api.py`"},
        {"repo": "pallets/flask", "commit_id": "2ac8988", "qa_type": "why", "question": "q3", "answer": "`app.py`"},
        {"repo": "pallets/flask", "commit_id": FLASK_COMMIT[:7], "qa_type": "how", "question": "q4",
         "answer": "See views.py: line 3 only."},
    ]
    p = tmp_path / "pro.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    loaded = registry.load_all(p, "swe-qa-pro", "flask", sweqa_manifest(), [])
    assert [t.to_dict() for t in loaded.tasks] == [{
        "task_id": "q000", "query": "Where is JSON dumped?", "query_type": "where", "corpus": "flask",
        "stratum": "pallets/flask",
        "gold": {"type": "file_set", "file_set": ["src/flask/json/provider.py"],
                 "citations": [{"cited": "json/provider.py", "lines": None, "file": "src/flask/json/provider.py"}]}}]
    assert [(d["row"], d["reason"]) for d in loaded.dropped] == [
        (0, "ambiguous citation"), (1, "other repository"), (2, "other commit"), (3, "absent citation"),
        (3, "no resolved citation")]
    assert loaded.dropped[3]["detail"] == "views.py: no such file"


def test_file_level_gold_ranks_files_at_their_first_hit():
    gold = {"type": "file_set", "file_set": ["b.py", "c.py"]}
    hits = [Hit("a.py", "x", "function", 1, 2, 3.0), Hit("b.py", "y", "function", 1, 2, 2.0),
            Hit("a.py", "z", "function", 5, 6, 1.5), Hit("c.py", "w", "function", 1, 2, 1.0)]
    assert relevance.ranked_units(gold, hits) == [("a.py", False), ("b.py", True), ("c.py", True)]
    assert relevance.relevant_ids(gold, []) == ["b.py", "c.py"]


def test_a_hub_dataset_offline_is_one_clear_error(monkeypatch):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    with pytest.raises(CrmatrixError) as e:
        read_records("hf:peng-weihan/SWE-QA-Bench")
    assert str(e.value) == ("hf:peng-weihan/SWE-QA-Bench: hub dataset 'peng-weihan/SWE-QA-Bench' cannot be loaded: "
                            "hub access is off (HF_DATASETS_OFFLINE=1); set HF_DATASETS_OFFLINE=0 to download it")


def test_an_empty_file_a_broken_line_and_a_bad_field_are_one_line_naming_the_file(tmp_path):
    p = tmp_path / "bad.jsonl"
    for text, error in [
        ("", "empty file"),
        ("\n\n", "empty file"),
        ('{"question": "q", "answer": "a"}\n{"question": \n', "line 2: not JSON: Expecting value at column 14"),
        ('{"question": "q", "answer": 3}\n', "row 0: field 'answer' must be a non-empty string, got 3"),
        # U+2028 and U+0085 are allowed in a JSON string: one row, not three lines
        ('{"question": "q", "answer": "a\u2028b\x85c"}\n',
         "no task left for corpus 'c' (dropped: 1 no resolved citation)"),
    ]:
        p.write_text(text)
        with pytest.raises(CrmatrixError) as e:
            registry.load(p, "swe-qa", "c", sweqa_manifest(), [])
        assert str(e.value) == f"{p}: {error}"


@pytest.fixture(scope="module")
def flask_tree(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("flask")
    pins.fetch_git("https://github.com/pallets/flask", FLASK_COMMIT, tmp / "src", [str(SHARED / "corpora")])
    return corpus_of(tmp, "git", {"git": "https://github.com/pallets/flask", "commit": FLASK_COMMIT}, tmp / "src")


@needs_shared
def test_swe_qa_flask_real_data(flask_tree):
    manifest, symbols = flask_tree
    loaded = registry.load_all(SWE_QA, "swe-qa", "flask", manifest, symbols)
    s = loaded.summary("swe-qa")
    assert (s["tasks"], s["dropped"]) == (48, 345)
    assert s["dropped_by_reason"] == {"absent citation": 4, "ambiguous citation": 9, "ambiguous name": 64,
                                      "common name": 11, "unresolved name": 257}
    assert s["gold"] == {"files": 122, "by_name_alone": 15}
    # flask's `g` is an assignment in globals.py, no definition: the one `g` defined is a test's
    assert {"row": 20, "reason": "common name", "detail": "g: only tests/test_reqctx.py defines it, but a bare "
            "lowercase word is as likely the language's or another library's"} in loaded.dropped
    assert loaded.dropped[:3] == [
        {"row": 0, "reason": "absent citation", "detail": "app.json: no such file"},
        {"row": 0, "reason": "unresolved name", "detail": "ensure_ascii: no definition or module"},
        {"row": 0, "reason": "ambiguous name",
         "detail": "dumps: 3 files (src/flask/json/__init__.py, src/flask/json/provider.py, src/flask/json/tag.py)"}]
    gold = {t.task_id: t.gold for t in loaded.tasks}
    # cited by path, and `json.dumps` by name: the module flask.json's function
    assert gold["q000"]["file_set"] == ["src/flask/json/__init__.py", "src/flask/json/provider.py",
                                        "tests/test_json.py"]
    assert gold["q000"]["citations"][2:] == [{"name": "DefaultJSONProvider", "file": "src/flask/json/provider.py"},
                                             {"name": "json.dumps", "file": "src/flask/json/__init__.py"}]
    # row 1 cites `blueprints.py` (two files: dropped) and `sansio/scaffold.py` by path and suffix
    assert gold["q001"]["file_set"] == ["src/flask/sansio/blueprints.py", "src/flask/sansio/scaffold.py"]
    assert gold["q003"]["file_set"] == ["docs/errorhandling.rst", "src/flask/debughelpers.py"]
    assert {t.stratum for t in loaded.tasks} == {"pallets/flask"}


# --- DS-1000 --------------------------------------------------------------------------------------

@pytest.mark.slow
@needs_shared
@by_hand
def test_ds1000_real_data(tmp_path):
    manifest, symbols = corpus_of(tmp_path, "ds1000", {"file": str(DS1000)})
    assert len(symbols) == 246 and symbols[0].kind == "doc"
    loaded = registry.load_all(DS1000, "ds1000", "docs", manifest, symbols)
    s = loaded.summary("ds1000")
    assert (s["tasks"], s["dropped_by_reason"]) == (511, {"no gold docs": 487, "repeated question": 2})
    strata = {}
    for t in loaded.tasks:
        strata[t.stratum] = strata.get(t.stratum, 0) + 1
    assert strata == {"Numpy": 152, "Matplotlib": 139, "Pandas": 119, "Sklearn": 57, "Tensorflow": 44}
    first = loaded.tasks[0]
    assert (first.task_id, first.gold) == ("ds0002", {
        "type": "docs", "ids": ["pandas.reference.api.pandas.dataframe.where"],
        "documents": ["pandas.reference.api.pandas.dataframe.where.txt"]})
    # fuzzy content matches add near-copies of a gold document to 186 tasks' gold
    assert sum(len(t.gold["documents"]) > len(t.gold["ids"]) for t in loaded.tasks) == 186
    assert relevance.is_relevant(first.gold, Hit("pandas.reference.api.pandas.dataframe.where.txt",
                                                "pandas.reference.api.pandas.dataframe.where", "doc", 1, 3, 1.0))


def test_ds1000_needs_a_documents_corpus(tmp_path):
    rows = [{"prompt": "p", "metadata": {"library": "Numpy", "problem_id": 1},
             "docs": [{"title": "numpy.x", "text": "t"}]}]
    p = tmp_path / "d.jsonl"
    p.write_text(json.dumps(rows[0]) + "\n")
    with pytest.raises(CrmatrixError, match=r"holds no documents \(a ds1000 dataset needs a ds1000 corpus\)"):
        registry.load(p, "ds1000", "c", {"files": []}, [])
