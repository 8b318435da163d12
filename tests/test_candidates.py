"""The candidate files of a swe-bench dataset: each rule as its paper states it, the option
checked, and a repository's store holding the candidates alone."""

import json

import pytest
from test_swebench_workflow import URL, bundle, row

from crmatrix import CrmatrixError, atomic, config
from crmatrix.corpora import candidates
from crmatrix.stages import fetch_repository

PATHS = [
    "setup.py", "src/_pytest/unittest.py", "src/_pytest/pytester.py", "sympy/utilities/randtest.py",
    "sympy/core/tests/test_basic.py", "sympy/testing/runtests.py", "testing/test_main.py", "testing/conftest.py",
    "pkg/test/helpers.py", "pkg/tests/helpers.py", "pkg/Tests/helpers.py", "pkg/io_test.py", "pkg/test.py",
    "pkg/testutils.py", "pkg/contest.py", "conftest.py",
]


@pytest.mark.parametrize(("rule", "kept"), [
    ("all", PATHS),
    # a file or directory named test* goes: testing/, tests/, test/, test.py, testutils.py, test_*.py
    ("agentless", ["setup.py", "src/_pytest/unittest.py", "src/_pytest/pytester.py", "sympy/utilities/randtest.py",
                   "pkg/Tests/helpers.py", "pkg/io_test.py", "pkg/contest.py", "conftest.py"]),
    # `test` anywhere, in any case: unittest.py, pytester.py, randtest.py, contest.py, conftest.py and Tests/ go too
    ("swerank", ["setup.py"]),
    # test/ and tests/ directories, test_*.py and *_test.py files; testing/ and test.py stay
    ("locagent", ["setup.py", "src/_pytest/unittest.py", "src/_pytest/pytester.py", "sympy/utilities/randtest.py",
                  "sympy/testing/runtests.py", "testing/conftest.py", "pkg/Tests/helpers.py", "pkg/test.py",
                  "pkg/testutils.py", "pkg/contest.py", "conftest.py"]),
    # each language's own conventions (crmatrix.corpora.testfiles): test dirs, test_*.py, *_test.py,
    # conftest.py, Python's testing/; unittest.py, randtest.py, Tests/, test.py and testutils.py stay
    ("language", ["setup.py", "src/_pytest/unittest.py", "src/_pytest/pytester.py", "sympy/utilities/randtest.py",
                  "pkg/Tests/helpers.py", "pkg/test.py", "pkg/testutils.py", "pkg/contest.py"]),
])
def test_each_rule_keeps_what_its_paper_keeps(rule, kept):
    assert candidates.select(rule, PATHS) == kept


def test_swerank_tests_pytests_files_by_their_names_alone():
    # SweRank's exception for pytest-dev/pytest, whose every source path holds `_pytest`
    assert candidates.select("swerank", [*PATHS, "src/_pytest/python.py"], "pytest-dev/pytest") == [
        "setup.py", "pkg/test/helpers.py", "pkg/tests/helpers.py", "pkg/Tests/helpers.py", "src/_pytest/python.py"]
    assert candidates.select("swerank", ["src/_pytest/python.py"], "psf/requests") == []
    # the other rules read the path alone
    assert candidates.keeper("agentless", "pytest-dev/pytest") is candidates.RULES["agentless"]


def raw(mirror, datasets):
    return {"git_mirrors": [str(mirror)], "repositories": {"widget": {"git": URL}}, "datasets": datasets,
            "systems": {"builtin": {"type": "builtin", "methods": ["hybrid"]}}, "arms": {"baseline": {}}}


def test_the_option_defaults_to_agentless_and_an_unknown_rule_is_one_error(tmp_path, monkeypatch):
    mirror, (first, _) = bundle(tmp_path)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sb.jsonl").write_text(json.dumps(row("acme__widget-1", "acme/widget", first, "x")) + "\n")
    sb = {"format": "swe-bench", "file": "sb.jsonl"}
    m = config.from_dict(raw(mirror, {"sb": sb}))
    assert m.corpora["widget"].conf["candidates"] == "agentless" == m.datasets["sb-widget"].conf["candidates"]
    m = config.from_dict(raw(mirror, {"sb": {**sb, "candidates": "swerank"}}))
    assert m.corpora["widget@swerank"].conf["candidates"] == "swerank"
    with pytest.raises(CrmatrixError) as e:
        config.from_dict(raw(mirror, {"sb": {**sb, "candidates": "tests"}}))
    assert str(e.value) == ("config: datasets.sb.candidates: 'tests' is not a candidate rule (allowed: agentless, all, "
                            "language, locagent, swerank)")


def test_two_rules_on_one_repository_make_two_stores_and_rename_none(tmp_path, monkeypatch):
    """A comparison (the field's rule beside `all`): the default rule's store keeps the repository's
    name, the other is REPOSITORY@RULE, each holding its own candidate set of the same commits."""
    mirror, (first, _) = bundle(tmp_path)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sb.jsonl").write_text(json.dumps(row("acme__widget-1", "acme/widget", first, "x")) + "\n")
    sb = {"format": "swe-bench", "file": "sb.jsonl"}
    m = config.from_dict(raw(mirror, {"sb": sb, "sb-all": {**sb, "candidates": "all"}}))
    assert sorted(m.corpora) == ["widget", "widget@all"]
    assert (m.corpora["widget"].conf["candidates"], m.corpora["widget@all"].conf["candidates"]) == ("agentless", "all")
    assert m.corpora["widget@all"].conf["repository"] == "acme/widget"
    assert m.corpora["widget@all"].conf["commits"] == m.corpora["widget"].conf["commits"] == [first]
    assert [m.datasets[d].conf["corpus"] for d in ("sb-widget", "sb-all-widget")] == ["widget", "widget@all"]
    alone = config.from_dict(raw(mirror, {"sb": sb}))
    assert alone.corpora["widget"].conf == m.corpora["widget"].conf
    with pytest.raises(CrmatrixError) as e:
        config.from_dict({**raw(mirror, {"sb": sb}), "repositories": {"wid@get": {"git": URL}}})
    assert str(e.value) == ("config: repositories.wid@get: a repository's name holds no '@' (the stores of its other "
                            "candidate rules are named REPOSITORY@RULE)")


FILES = {
    "pkg/core.py": "def core():\n    return 1\n",
    "pkg/unittest.py": "def run():\n    return 2\n",
    "pkg/tests/test_core.py": "def test_core():\n    assert True\n",
    "testing/helpers.py": "def helper():\n    return 3\n",
}


@pytest.mark.parametrize(("rule", "indexed"), [
    ("all", ["pkg/core.py", "pkg/tests/test_core.py", "pkg/unittest.py", "testing/helpers.py"]),
    ("agentless", ["pkg/core.py", "pkg/unittest.py"]),
    ("swerank", ["pkg/core.py"]),
    ("locagent", ["pkg/core.py", "pkg/unittest.py", "testing/helpers.py"]),
])
def test_a_repository_store_holds_the_candidates_and_lists_the_rest_apart(tmp_path, rule, indexed):
    mirror, (sha,) = bundle(tmp_path, (FILES,))
    out = tmp_path / "repo"
    manifest = fetch_repository.run("widget", {"git": URL, "include": ["**/*.py"], "commits": [sha],
                                               "candidates": rule}, out, [str(mirror)])
    assert [p for p, _, _ in atomic.read_json(out / "commits.json")[sha]] == indexed
    assert [p for p, _ in atomic.read_json(out / "outside.json")[sha]] == sorted(set(FILES) - set(indexed))
    assert (manifest["candidates"], manifest["files"], manifest["outside_candidates"]) == (
        rule, len(indexed), len(FILES) - len(indexed))
    assert manifest["pin"] == {"kind": "git", "git": URL, "commits": [sha], "candidates": rule}  # runs name it


def test_a_gold_test_file_stays_gold_at_both_levels_and_the_summary_counts_it(tmp_path):
    from crmatrix.stages import extract_repository, localize_tasks

    mirror, (sha,) = bundle(tmp_path, (FILES,))
    repo = tmp_path / "repo"
    fetch_repository.run("widget", {"git": URL, "include": ["**/*.py"], "commits": [sha], "candidates": "agentless"},
                         repo, [str(mirror)])
    extract_repository.run(repo, tmp_path / "store", tmp_path / "stats.json", tmp_path / "cache")
    patch = ("diff --git a/pkg/tests/test_core.py b/pkg/tests/test_core.py\n--- a/pkg/tests/test_core.py\n"
             "+++ b/pkg/tests/test_core.py\n@@ -1,2 +1,2 @@\n def test_core():\n-    assert True\n+    assert False\n")
    (tmp_path / "sb.jsonl").write_text(json.dumps({**row("acme__widget-1", "acme/widget", sha, "x"), "patch": patch})
                                       + "\n")
    for level, gold in [("files", {"type": "file_set", "file_set": ["pkg/tests/test_core.py"]}),
                        ("functions", {"type": "definitions", "ids": ["pkg/tests/test_core.py:test_core"],
                                       "definitions": [["pkg/tests/test_core.py", "test_core", 1, 2]]})]:
        out = tmp_path / level
        (task,) = localize_tasks.run(file=tmp_path / "sb.jsonl", repository=repo, store=tmp_path / "store",
                                     corpus="widget", repo="acme/widget", level=level, out=out / "t.jsonl",
                                     qrels=out / "q.qrels", summary=out / "s.json")
        assert task.gold == gold
        # still one thing to find, which no system can rank: a miss at every k
        assert (out / "q.qrels").read_text() == {
            "files": "acme__widget-1 0 pkg/tests/test_core.py 1\n",
            "functions": "acme__widget-1 0 pkg/tests/test_core.py:1:test_core 1\n"}[level]
        summary = atomic.read_json(out / "s.json")
        assert (summary["tasks"], summary["dropped"], summary["gold"]) == (1, 0, {
            "candidates": "agentless", "tasks_outside_candidates": 1, "files_outside_candidates": 1})
