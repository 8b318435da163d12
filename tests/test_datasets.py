import json

import pytest

from crmatrix import CrmatrixError
from crmatrix.datasets import registry, relevance
from crmatrix.datasets.tasks import Task
from crmatrix.hits import Hit, docid
from crmatrix.symbols import Symbol

MANIFEST = {"files": [{"path": "src/pkg/core.py"}, {"path": "src/pkg/util.py"}, {"path": "README.md"}]}


def sym(name, path, kind="function"):
    return Symbol(name, kind, "", path, "python", 1, 2, f"def {name}()", "", f"def {name}(): pass")


SYMBOLS = [sym("parse", "src/pkg/core.py"), sym("Store", "src/pkg/core.py", "class"), sym("slug", "src/pkg/util.py")]


def write(tmp_path, rows):
    p = tmp_path / "ds.json"
    p.write_text(json.dumps(rows))
    return p


def test_codelens_rows_become_tasks(tmp_path):
    p = write(tmp_path, [
        {"query": "parse text", "expected_symbol": "parse", "expected_file_suffix": "pkg/core.py",
         "query_type": "natural_language"},
        {"query": "slug", "expected_symbol": "slug", "expected_file_suffix": "util.py"},
    ])
    tasks = registry.load(p, "codelens", "c", MANIFEST, SYMBOLS)
    assert [t.to_dict() for t in tasks] == [
        {"task_id": "q000", "query": "parse text", "query_type": "natural_language", "corpus": "c", "stratum": "",
         "gold": {"type": "symbol", "symbol": "parse", "file_suffix": "pkg/core.py"}},
        {"task_id": "q001", "query": "slug", "query_type": "uncategorized", "corpus": "c", "stratum": "",
         "gold": {"type": "symbol", "symbol": "slug", "file_suffix": "util.py"}},
    ]


GOOD = {"query": "q", "expected_symbol": "parse", "expected_file_suffix": "pkg/core.py", "query_type": "identifier"}


@pytest.mark.parametrize("bad,message", [
    ({"expected_symbol": "parse", "expected_file_suffix": "core.py"},
     "row 1: field 'query' must be a non-empty string, got None"),
    ({**GOOD, "expected_symbol": ""}, "row 1: field 'expected_symbol' must be a non-empty string, got ''"),
    ({**GOOD, "query_type": "nl"},
     "row 1: field 'query_type' is 'nl'; expected one of: natural_language, short_phrase, identifier, issue_to_edit"),
    ({**GOOD, "expected_file_suffix": "pkg/nope.py"},
     "row 1: field 'expected_file_suffix' 'pkg/nope.py' matches no file of corpus 'c'"),
    ({**GOOD, "expected_symbol": "slug"},
     "row 1: field 'expected_symbol' 'slug' is not a symbol of src/pkg/core.py (it has 2: Store, parse)"),
    (["not", "an", "object"], "row 1: expected an object, got list"),
])
def test_bad_row_names_file_row_and_field(tmp_path, bad, message):
    p = write(tmp_path, [{**GOOD, "query": "another question"}, bad])
    with pytest.raises(CrmatrixError) as e:
        registry.load(p, "codelens", "c", MANIFEST, SYMBOLS)
    assert str(e.value) == f"{p}: {message}"


def test_unreadable_or_empty_dataset(tmp_path):
    p = tmp_path / "ds.json"
    p.write_text("{not json")
    with pytest.raises(CrmatrixError, match=rf"^{p}: not readable as JSON"):
        registry.load(p, "codelens", "c", MANIFEST, SYMBOLS)
    p.write_text("[]")
    with pytest.raises(CrmatrixError, match=rf"^{p}: expected a non-empty JSON list"):
        registry.load(p, "codelens", "c", MANIFEST, SYMBOLS)
    with pytest.raises(CrmatrixError, match=r"unknown dataset format 'trec' \(known: callgraph, codelens, derived, "
                                             r"ds1000, ds1000-library, history, repoqa, swe-bench, swe-qa, "
                                             r"swe-qa-pro\)"):
        registry.load(p, "trec", "c", MANIFEST, SYMBOLS)


def test_relevance_is_exact_name_and_path_suffix():
    gold = {"symbol": "parse", "file_suffix": "pkg/core.py"}
    assert relevance.is_relevant(gold, Hit("src/pkg/core.py", "parse", "function", 1, 2, 1.0))
    assert not relevance.is_relevant(gold, Hit("src/pkg/core.py", "Parse", "function", 1, 2, 1.0))
    assert not relevance.is_relevant(gold, Hit("src/pkg/util.py", "parse", "function", 1, 2, 1.0))
    # a suffix, not a substring: the stub beside the module is another file
    assert not relevance.is_relevant(gold, Hit("src/pkg/core.pyi", "parse", "function", 1, 2, 1.0))
    assert [s.name for s in relevance.relevant_symbols(gold, SYMBOLS)] == ["parse"]


def stage_inputs(tmp_path):
    """The manifest and symbols files `stages.prepare_dataset` reads, as the workflow writes them."""
    from crmatrix import atomic

    atomic.write_json(tmp_path / "manifest.json", MANIFEST)
    atomic.write_jsonl(tmp_path / "symbols.jsonl", [s.to_dict() for s in SYMBOLS])
    return tmp_path / "manifest.json", tmp_path / "symbols.jsonl"


@pytest.mark.parametrize("second,message", [
    ("parse text", "row 2: query 'parse text' repeats row 0"),
    ("  parse text\n", "row 2: query '  parse text\\n' repeats row 0"),
    ("Parse Text", "row 2: query 'Parse Text' repeats row 0 ('parse text')"),
])
def test_a_repeated_query_names_both_rows_and_writes_nothing(tmp_path, second, message):
    from crmatrix.stages import prepare_dataset

    manifest, symbols = stage_inputs(tmp_path)
    p = write(tmp_path, [{**GOOD, "query": "parse text"}, {**GOOD, "query": "parse the text"},
                         {**GOOD, "query": second}])
    out, qrels = tmp_path / "out" / "ds.jsonl", tmp_path / "out" / "ds.qrels"
    with pytest.raises(CrmatrixError) as e:
        prepare_dataset.run(p, "codelens", "c", manifest, symbols, out, qrels)
    assert str(e.value) == f"{p}: {message}"
    assert not (tmp_path / "out").exists()


def test_qrels_look_up_each_gold_by_name_or_path_and_find_what_a_pass_over_the_corpus_finds():
    syms = [Symbol(n, "function", "", p, "python", line, line + 1, "", "", "")
            for line, (n, p) in enumerate([("parse", "a/io.py"), ("load", "a/io.py"), ("parse", "b/io.py"),
                                           ("parse", "b/cli.py"), ("run", "b/cli.py"), ("Parse", "c/x.py")], 1)]
    golds = {"symbol": {"type": "symbol", "symbol": "parse", "file_suffix": "io.py"},
             "calls": {"type": "calls", "answers": [["run", "cli.py"], ["parse", "b/io.py"], ["nope", "x.py"]]},
             "files": {"type": "file_set", "file_set": ["b/cli.py", "z.py"]},
             "docs": {"type": "docs", "documents": ["c/x.py"]},
             "needle": {"type": "needle", "equivalent": [["b/cli.py", "run", 5, 5], ["a/io.py", "load", 9, 9]]}}
    tasks = [Task(k, "q", "nl", g, "c") for k, g in golds.items()]

    def ids(*pos):
        return [docid(Hit(syms[i].path, syms[i].name, "function", syms[i].start_line, syms[i].end_line, 0.0))
                for i in pos]

    assert relevance.qrels(tasks, syms) == {"symbol": ids(0, 2), "calls": ids(2, 4), "files": ["b/cli.py", "z.py"],
                                            "docs": ids(5), "needle": ids(4)}
    assert relevance.qrels(tasks, syms) == {t.task_id: relevance.relevant_ids(t.gold, syms) for t in tasks}
