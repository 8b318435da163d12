"""SWE-QA gold from an answer's citations, by path and by name, on hand-made trees and answers
(no shared data): crmatrix.datasets.citations and the swe-qa loader's drops (its bad-file errors
are in test_formats)."""

import json

import pytest

from crmatrix import CrmatrixError
from crmatrix.datasets import citations, registry
from crmatrix.symbols import Symbol


def sym(path, name, start, end, parent="", kind="function"):
    return Symbol(name=name, kind=kind, parent=parent, path=path, language="python", start_line=start,
                  end_line=end, signature="", doc="", body="")


SYMBOLS = [
    sym("src/flask/app.py", "Flask", 1, 50, kind="class"),
    sym("src/flask/app.py", "make_response", 10, 20, "Flask", "method"),
    sym("src/flask/sansio/app.py", "App", 1, 40, kind="class"),
    sym("src/flask/sansio/app.py", "make_response", 5, 9, "App", "method"),
    sym("src/flask/config.py", "get_option", 1, 3),
    sym("src/flask/config.py", "Config", 5, 30, kind="class"),
    sym("src/flask/config.py", "root", 6, 8, "Config", "method"),  # a property's getter ...
    sym("src/flask/config.py", "root", 9, 11, "Config", "method"),  # ... and its setter
    sym("src/flask/config.py", "Outer", 31, 60, kind="class"),
    sym("src/flask/config.py", "Inner", 32, 59, "Outer", "class"),
    sym("src/flask/config.py", "run", 33, 40, "Inner", "method"),
    sym("src/_pytest/fixtures.py", "FixtureDef", 1, 9, kind="class"),
    sym("tests/test_app.py", "test_run", 1, 4),
    sym("tests/test_app.py", "run", 5, 6),
]
FILES = sorted({s.path for s in SYMBOLS} | {"src/flask/__init__.py", "src/flask/json/__init__.py", "src/utils.py",
                                           "src/test_utils.py"})


@pytest.mark.parametrize("cited,files,found", [
    # a suffix of another file's name is not that file: `utils.py` is src/utils.py, not src/test_utils.py
    ("utils.py", ["src/test_utils.py", "src/utils.py"], ("src/utils.py", ["src/utils.py"])),
    ("app.py", ["tests/test_app.py"], (None, [])),
    ("app.py", ["src/flask/app.py", "src/flask/sansio/app.py"],
     (None, ["src/flask/app.py", "src/flask/sansio/app.py"])),
])
def test_a_path_names_its_own_file_never_one_that_merely_ends_with_it(cited, files, found):
    assert citations.resolve_path(cited, files) == found


def test_names_are_backticked_identifiers_dotted_names_and_code_shaped_words():
    text = ("Flask.make_response builds it, e.g. through `get_option(name)` or `@route`; see `src/flask/app.py`, "
            "provider.py and `json.py`. The SegmentPrefetch class and _get_streams use auto_max_age, i.e. "
            "`type`, `open`, `__init__`, `self.x > 1`; the Flask class. Again `Flask.make_response()`.")
    assert citations.names(text, {"py"}) == ["get_option", "route", "Flask.make_response", "SegmentPrefetch",
                                             "_get_streams", "auto_max_age"]


@pytest.mark.parametrize("name,found", [
    ("Flask.make_response", ("src/flask/app.py", ["src/flask/app.py"])),  # through its parent class
    ("flask.app.Flask.make_response", ("src/flask/app.py", ["src/flask/app.py"])),  # module, then class
    ("make_response", (None, ["src/flask/app.py", "src/flask/sansio/app.py"])),  # ambiguous bare name
    ("get_option", ("src/flask/config.py", ["src/flask/config.py"])),
    ("flask.get_option", ("src/flask/config.py", ["src/flask/config.py"])),  # defined in the package `flask`
    ("_pytest.fixtures.FixtureDef", ("src/_pytest/fixtures.py", ["src/_pytest/fixtures.py"])),
    ("_pytest.fixtures", ("src/_pytest/fixtures.py", ["src/_pytest/fixtures.py"])),  # a module
    ("flask.json", ("src/flask/json/__init__.py", ["src/flask/json/__init__.py"])),  # a package's module
    ("Config.root", ("src/flask/config.py", ["src/flask/config.py"])),  # two definitions, one file
    ("Outer.Inner.run", ("src/flask/config.py", ["src/flask/config.py"])),
    ("Inner.run", ("src/flask/config.py", ["src/flask/config.py"])),
    ("run", (None, ["src/flask/config.py", "tests/test_app.py"])),
    ("Outer.run", (None, [])),  # run is Inner's, not Outer's
    ("self.expires", (None, [])),
    ("FixtureDef.get_option", (None, [])),
])
def test_a_name_resolves_to_the_one_file_of_its_definitions(name, found):
    assert citations.Definitions(SYMBOLS, FILES).resolve(name) == found


def manifest():
    return {"files": [{"path": p} for p in FILES],
            "pin": {"kind": "git", "git": "https://github.com/pallets/flask", "commit": "85c5d93c"}}


def write(tmp_path, answers):
    p = tmp_path / "flask.jsonl"
    p.write_text("".join(json.dumps({"question": f"q{i}", "answer": a}) + "\n" for i, a in enumerate(answers)))
    return p


def test_gold_holds_the_files_of_resolved_paths_and_names_and_counts_the_rest(tmp_path):
    p = write(tmp_path, [
        "`Flask.make_response` calls `get_option` (see utils.py); make_response is in App; `missing_thing` too.",
        "Only `make_response` and `self.expires`.",
        "Nothing cited here.",
    ])
    loaded = registry.load_all(p, "swe-qa", "flask", manifest(), SYMBOLS)
    assert [(t.task_id, t.gold["file_set"]) for t in loaded.tasks] == [
        ("q000", ["src/flask/app.py", "src/flask/config.py", "src/utils.py"])]
    assert loaded.tasks[0].gold["citations"] == [
        {"cited": "utils.py", "lines": None, "file": "src/utils.py"},
        {"name": "Flask.make_response", "file": "src/flask/app.py"},
        {"name": "get_option", "file": "src/flask/config.py"}]
    both = "make_response: 2 files (src/flask/app.py, src/flask/sansio/app.py)"
    assert loaded.dropped == [
        {"row": 0, "reason": "unresolved name", "detail": "missing_thing: no definition or module"},
        {"row": 0, "reason": "ambiguous name", "detail": both},
        {"row": 1, "reason": "ambiguous name", "detail": both},
        {"row": 1, "reason": "unresolved name", "detail": "self.expires: no definition or module"},
        {"row": 1, "reason": "no resolved citation",
         "detail": "no citation of the answer names one file of the tree (1 ambiguous name, 1 unresolved name)"},
        {"row": 2, "reason": "no resolved citation", "detail": "the answer cites no path or name"}]


def test_a_file_whose_every_citation_fails_is_one_line_with_the_drop_counts(tmp_path):
    p = write(tmp_path, ["Only `make_response` and `self.expires`.", "See app.py."])
    with pytest.raises(CrmatrixError) as e:
        registry.load(p, "swe-qa", "flask", manifest(), SYMBOLS)
    assert str(e.value) == (f"{p}: no task left for corpus 'flask' (dropped: 1 ambiguous citation, 1 ambiguous name, "
                            "2 no resolved citation, 1 unresolved name)")



def test_a_bare_common_name_makes_no_gold_and_the_summary_counts_gold_cited_by_names_alone(tmp_path):
    """An answer's `read` is the file object's: the tree's one test helper named `read` must not
    make its test file gold. Qualified, shaped like code or capitalized, a name resolves."""
    symbols = [*SYMBOLS, sym("tests/test_io.py", "read", 1, 3),
               sym("src/flask/wrappers.py", "Response", 1, 20, kind="class"),
               sym("src/flask/wrappers.py", "stream", 5, 9, "Response", "method")]
    files = sorted({*FILES, "tests/test_io.py", "src/flask/wrappers.py"})
    p = write(tmp_path, ["It calls `read()` on the file and `Response.stream`, then `Config` (see utils.py).",
                         "`get_option` in src/flask/config.py; `stream` alone."])
    loaded = registry.load_all(p, "swe-qa", "flask", {**manifest(), "files": [{"path": f} for f in files]}, symbols)
    assert [t.gold["file_set"] for t in loaded.tasks] == [
        ["src/flask/config.py", "src/flask/wrappers.py", "src/utils.py"], ["src/flask/config.py"]]
    common = "only {} defines it, but a bare lowercase word is as likely the language's or another library's"
    assert loaded.dropped == [
        {"row": 0, "reason": "common name", "detail": "read: " + common.format("tests/test_io.py")},
        {"row": 1, "reason": "common name", "detail": "stream: " + common.format("src/flask/wrappers.py")}]
    # four gold files; two of them (config.py and wrappers.py of the first question) cited by a name alone
    summary = loaded.summary("swe-qa")
    assert summary["gold"] == {"files": 4, "by_name_alone": 2}
    assert [citations.distinctive(n) for n in ("read", "jsonify", "Config", "URL", "get_option", "_x", "camelCase",
                                               "io.read")] == [False, False, True, True, True, True, True, True]
