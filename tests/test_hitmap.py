"""From an external system's answer to hits: parsers, hit paths, field mapping, symbol resolution, order."""

from pathlib import Path

import pytest

from crmatrix.hits import Hit
from crmatrix.symbols import Symbol
from crmatrix.systems import hitmap, templates
from crmatrix.systems.answers import QueryFailure


def sym(name, path, start, end, kind="function"):
    return Symbol(name, kind, "", path, "python", start, end, "", "", "")


TABLE = hitmap.SymbolTable([sym("Store", "pkg/store.py", 1, 9, "class"), sym("save", "pkg/store.py", 2, 3, "method"),
                            sym("load", "pkg/store.py", 5, 6, "method"), sym("save", "pkg/other.py", 1, 2)],
                           "/corpus")


def failure(fn, *args) -> tuple[str, str]:
    with pytest.raises(QueryFailure) as e:
        fn(*args)
    return e.value.kind, str(e.value)


def test_hit_paths_select_and_flatten_and_name_what_is_missing():
    answer = {"data": {"groups": [{"hits": [1, 2]}, {"hits": [3]}]}}
    assert hitmap.select(answer, "data.groups[].hits[]") == [1, 2, 3]
    assert hitmap.select(answer, "data.groups[].hits") == [1, 2, 3]
    assert hitmap.select([4, 5], "") == [4, 5]
    assert failure(hitmap.select, answer, "data.symbols[]") == (
        "bad-output", "hit path 'data.symbols[]': no key 'symbols' in an object with keys 'groups'")
    assert failure(hitmap.select, {"data": 3}, "data") == (
        "bad-output", "hit path 'data': points at a int, expected a list")


def test_parsers_and_blank_answers():
    assert hitmap.parse("pkg/a.py:12:    def f():\nnoise\n./pkg/b.py:3\n", "path-line") == [
        {"path": "pkg/a.py", "start_line": 12}, {"path": "./pkg/b.py", "start_line": 3}]
    md = "## results\n### [1] `pkg/store.py:2-3` — `Store.save`\ntext\n### [2] `pkg/other.py:1-2` — `save`\n"
    pattern = r"^### \[\d+\] `(?P<path>[^`]+?):(?P<start_line>\d+)-(?P<end_line>\d+)` — `(?P<symbol>[^`]+)`"
    assert hitmap.parse(md, "regex", pattern) == [
        {"path": "pkg/store.py", "start_line": "2", "end_line": "3", "symbol": "Store.save"},
        {"path": "pkg/other.py", "start_line": "1", "end_line": "2", "symbol": "save"}]
    assert failure(hitmap.parse, "  \n", "json") == ("empty", "no answer (blank output)")
    assert failure(hitmap.parse, "{'a': 1}", "json")[0] == "bad-output"
    assert hitmap.check_pattern("(?P<file>.*)") == ("named groups must include path and be among path, symbol, kind, "
                                                    "start_line, end_line, score (unknown: file)")


def test_hits_resolve_to_the_corpus_symbols():
    records = [
        {"file": "/corpus/pkg/store.py", "line": 5},                # a line: the innermost symbol there
        {"file": "./pkg/store.py", "name": "Store.save", "line": 2},  # qualified: the unqualified symbol
        {"file": "pkg/other.py", "name": "save"},                    # a name without a line: its first definition
        {"file": "pkg/none.py", "name": "ghost", "line": 7},          # not in the corpus: kept as answered
    ]
    hits = hitmap.to_hits(records, {"path": "file", "symbol": "name", "start_line": "line"}, TABLE, 10)
    assert hits == [Hit("pkg/store.py", "load", "method", 5, 6, 1.0), Hit("pkg/store.py", "save", "method", 2, 3, 0.5),
                    Hit("pkg/other.py", "save", "function", 1, 2, 1 / 3), Hit("pkg/none.py", "ghost", "", 7, 7, 0.25)]
    assert failure(hitmap.to_hits, [{"line": 3}], {}, TABLE, 10) == (
        "bad-output", "hit 0: no path at 'path' in an object with keys 'line'")
    assert failure(hitmap.to_hits, [{"path": "a", "start_line": "x"}], {}, TABLE, 10) == (
        "bad-output", "hit 0: start_line 'x' is not a line number")


def test_a_hit_without_a_path_costs_its_rank_when_the_tool_says_rows_may_have_none():
    records = [{"path": None, "score": 0.9}, {"path": None, "score": 0.8},
               {"path": "pkg/store.py", "start_line": 5, "score": 0.7}]
    hits = hitmap.to_hits(records, {"score": "score"}, TABLE, 10, pathless="rank")
    assert [(h.path, h.symbol, h.score) for h in hits] == [("", "", 0.9), ("", "", 0.8), ("pkg/store.py", "load", 0.7)]
    assert failure(hitmap.to_hits, records, {"score": "score"}, TABLE, 10) == (  # the default: bad output
        "bad-output", "hit 0: no path at 'path' in an object with keys 'path', 'score'")


def test_scored_hits_take_the_deterministic_order_and_duplicates_count_once():
    records = [{"path": "pkg/store.py", "symbol": "load", "score": 1.0},
               {"path": "pkg/store.py", "symbol": "save", "score": 2.0},
               {"path": "pkg/other.py", "symbol": "save", "score": 2.0},
               {"path": "pkg/store.py", "start_line": 3, "score": 0.5}]  # save again, lower
    hits = hitmap.to_hits(records, {}, TABLE, 10)
    assert [(h.path, h.symbol, h.score) for h in hits] == [
        ("pkg/other.py", "save", 2.0), ("pkg/store.py", "save", 2.0), ("pkg/store.py", "load", 1.0)]
    assert len(hitmap.to_hits(records, {}, TABLE, 2)) == 2


def test_templates_fill_argv_elements_and_keep_types_in_args():
    values = {"query": "a b; rm -rf /", "k": 5, "args": {"q": "x"}}
    assert templates.fill_argv(["t", "--q={query}", "{k}", "{args}", '{"json": 1}'], values) == [
        "t", "--q=a b; rm -rf /", "5", '{"q": "x"}', '{"json": 1}']
    assert templates.fill_args({"q": "{query}", "n": "{k}", "s": "k={k}", "l": ["{k}"]}, values) == {
        "q": "a b; rm -rf /", "n": 5, "s": "k=5", "l": [5]}


def test_a_name_beats_a_line_that_is_a_little_off():
    hits = hitmap.to_hits([{"path": "pkg/store.py", "symbol": "load", "start_line": 4},   # the blank line above
                           {"path": "pkg/store.py", "symbol": "Store.nothing", "start_line": 5}], {}, TABLE, 10)
    assert [(h.symbol, h.start_line) for h in hits] == [("load", 5)]  # the second is load again: counted once


def test_a_named_hit_takes_its_names_definition_nearest_the_line_and_repeats_collapse():
    """What docs/systems.md ("How answers are read") says of hits with a name and a line, case by case."""
    page = " ".join((Path(__file__).parents[1] / "docs" / "systems.md").read_text().split())
    for case in ("**a name and a line**: the name wins", "**a name alone**: the first definition of that name",
                 "**a line alone, or a name the file does not define**: the innermost symbol",
                 "an answer of 100 rows where two name one symbol counts 99 hits"):
        assert case in page, f"docs/systems.md: {case}"
    table = hitmap.SymbolTable([sym("A", "m.py", 1, 4, "class"), sym("save", "m.py", 2, 4, "method"),
                                sym("load", "m.py", 6, 8), sym("B", "m.py", 10, 14, "class"),
                                sym("save", "m.py", 12, 14, "method")], "/corpus")
    at = lambda records: [(h.symbol, h.start_line) for h in hitmap.to_hits(records, {}, table, 10)]  # noqa: E731
    assert at([{"path": "m.py", "symbol": "save", "start_line": 13}]) == [("save", 12)]  # the one holding the line
    assert at([{"path": "m.py", "symbol": "B.save", "start_line": 11}]) == [("save", 12)]  # nearest, unqualified
    assert at([{"path": "m.py", "symbol": "save", "start_line": 7}]) == [("save", 2)]  # inside load: the name wins
    assert at([{"path": "m.py", "symbol": "save"}]) == [("save", 2)]  # no line: the first of that name
    assert at([{"path": "m.py", "symbol": "nothing", "start_line": 13}]) == [("save", 12)]  # innermost at the line
    assert at([{"path": "m.py", "start_line": 9}, {"path": "m.py", "start_line": 7}]) == [("", 9), ("load", 6)]
    # 100 rows, two of them the same symbol: 99 hits, the repeat dropped from its later place
    rows = [{"path": f"f{i}.py", "start_line": 1} for i in range(98)]
    rows[50:50] = [{"path": "m.py", "start_line": 7}, {"path": "m.py", "symbol": "load", "start_line": 6}]
    hits = hitmap.to_hits(rows, {}, table, 100)
    assert len(rows) == 100 and len(hits) == 99 and (hits[50].symbol, hits[51].path) == ("load", "f50.py")


def test_each_ranked_hit_keeps_what_the_tool_named_beside_what_it_resolved_to():
    """`crmatrix try` shows both: a tool's line 5 is the method `load` (lines 5-6); its name
    `Store.save` is `save`; a path outside the corpus stays as named. In the ranked order (by
    score), the duplicate `save` left out at its second place."""
    records = [{"file": "pkg/store.py", "line": 5, "score": 1.0},
               {"file": "/corpus/pkg/store.py", "name": "Store.save", "line": 3, "end": 4, "score": 2.0},
               {"file": "pkg/store.py", "name": "save", "score": 0.5},
               {"file": "vendored/x.py", "name": "ghost", "kind": "function", "line": 7, "score": 0.5}]
    fields = {"path": "file", "symbol": "name", "start_line": "line", "end_line": "end"}
    assert hitmap.resolve_hits(records, fields, TABLE, 10) == [
        (Hit("pkg/store.py", "Store.save", "", 3, 4, 2.0), Hit("pkg/store.py", "save", "method", 2, 3, 2.0)),
        (Hit("pkg/store.py", "", "", 5, 5, 1.0), Hit("pkg/store.py", "load", "method", 5, 6, 1.0)),
        (Hit("vendored/x.py", "ghost", "function", 7, 7, 0.5), Hit("vendored/x.py", "ghost", "function", 7, 7, 0.5)),
    ]
    assert hitmap.to_hits(records, fields, TABLE, 10) == [h for _, h in hitmap.resolve_hits(records, fields, TABLE, 10)]
