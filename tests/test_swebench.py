"""SWE-bench as localization: rows, gold files and functions from the patch, drops by reason, errors."""

import json

import pytest
from conftest import SHARED, needs_shared

from crmatrix import CrmatrixError
from crmatrix.corpora import pins
from crmatrix.datasets import swebench
from crmatrix.datasets.patches import FileDiff, Insertion
from crmatrix.datasets.relevance import is_relevant
from crmatrix.hits import Hit
from crmatrix.symbols.extract import extract_source

BASE = """\
import os


class Shape:
    sides = 0

    @property
    def area(self):
        return 0

    def grow(self, k):
        def scale(v):
            return v * k
        self.w = scale(self.w)


def helper(x):
    y = x + 1
    return y
"""
SYMBOLS = extract_source(BASE.encode(), "m.py", "python")


def changed(removed=(), insertions=()):
    diff = FileDiff("m.py", "m.py", "modified", tuple(removed), tuple(Insertion(a, tuple(ls)) for a, ls in insertions))
    return [s.qualname for s in swebench.changed_functions(diff, SYMBOLS, BASE)]


def test_the_symbols_the_cases_below_are_written_against():
    assert [(s.qualname, s.kind, s.start_line, s.end_line) for s in SYMBOLS] == [
        ("Shape", "class", 4, 14), ("Shape.area", "method", 7, 9), ("Shape.grow", "method", 11, 14),
        ("grow.scale", "function", 12, 13), ("helper", "function", 17, 19)]


@pytest.mark.parametrize(("removed", "insertions", "functions"), [
    ((1,), (), []),  # an import: module level
    ((5,), (), []),  # a class attribute: the class body, outside any method
    ((13,), (), ["grow.scale"]),  # the innermost function
    ((14, 18), (), ["Shape.grow", "helper"]),
    ((7,), (), ["Shape.area"]),  # a decorator is part of its function
    ((), [(19, ["    z = 2"])], ["helper"]),  # added at the end of a body
    ((), [(13, ["        w = 1"])], ["Shape.grow"]),  # after a nested function, at the outer body's depth
    ((), [(9, ["", "    def perimeter(self):", "        return 1"])], []),  # a new method after another
    ((), [(6, ["    @staticmethod"])], []),  # a decorator added above a method
    ((), [(8, ["        '''Doc.'''"])], ["Shape.area"]),
    ((), [(18, [""])], ["helper"]),  # blank lines: inside when both neighbours are
    ((), [(19, [""])], []),
    ((), [(0, ["import sys"])], []),  # the top of the file
])
def test_changed_functions(removed, insertions, functions):
    assert changed(removed, insertions) == functions


def patch_of(*files):
    """A git patch modifying line `how` of BASE (the line after it as context), or, with `new`/`gone`,
    adding or deleting each file."""
    out = []
    for path, how in files:
        if how == "new":
            out.append(f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n"
                       "@@ -0,0 +1 @@\n+x = 1\n")
        elif how == "gone":
            removed = "".join(f"-{line}\n" for line in BASE.splitlines())
            out.append(f"diff --git a/{path} b/{path}\ndeleted file mode 100644\n--- a/{path}\n+++ /dev/null\n"
                       f"@@ -1,{len(BASE.splitlines())} +0,0 @@\n{removed}")
        else:
            line, after = BASE.split("\n")[int(how) - 1:int(how) + 1]
            out.append(f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -{how},2 +{how},2 @@\n"
                       f"-{line}\n+new\n {after}\n")
    return "".join(out)


def row(instance, patch, repo="acme/widget", commit="a" * 40):
    return {"instance_id": instance, "repo": repo, "base_commit": commit, "problem_statement": f"issue {instance}",
            "patch": patch}


def write_rows(tmp_path, rows):
    path = tmp_path / "tasks.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_gold_and_drops_by_reason(tmp_path):
    rows = [
        row("w-0", patch_of(("pkg/m.py", "18"), ("docs/index.rst", "3"))),
        row("w-1", patch_of(("src/x.py", "1")), repo="other/repo"),
        row("w-2", patch_of(("pkg/m.py", "18")), commit="b" * 40),
        row("w-3", patch_of(("pkg/new.py", "new"))),
        row("w-4", patch_of(("README.rst", "1"), ("pkg/new.py", "new"))),
        row("w-5", patch_of(("pkg/gone.py", "gone"), ("pkg/m.py", "5"))),
        row("w-6", patch_of(("pkg/m.py", "5"))),
    ]
    path = write_rows(tmp_path, rows)
    indexed = {("acme/widget", "a" * 40): {"pkg/m.py", "pkg/gone.py", "pkg/other.py"}}
    asked = []

    def base_file(repo, commit, p):
        asked.append((repo, commit, p))
        return extract_source(BASE.encode(), p, "python"), BASE

    locs, dropped = swebench.localize(swebench.read_rows(path), {"acme/widget"},
                                      lambda r, c: indexed.get((r, c)), base_file)
    assert dropped == [
        {"row": 0, "instance_id": "w-0", "reason": "gold file not indexed", "detail": "docs/index.rst"},
        {"row": 1, "instance_id": "w-1", "reason": "repository not declared", "detail": "other/repo"},
        {"row": 2, "instance_id": "w-2", "reason": "commit in no mirror", "detail": f"acme/widget@{'b' * 40}"},
        {"row": 3, "instance_id": "w-3", "reason": "patch only adds files", "detail": "pkg/new.py"},
        {"row": 4, "instance_id": "w-4", "reason": "no gold file indexed", "detail": "README.rst"},
    ]
    assert [(loc.instance_id, loc.files, loc.function_ids) for loc in locs] == [
        ("w-0", ("pkg/m.py",), ("pkg/m.py:helper",)),
        ("w-5", ("pkg/gone.py", "pkg/m.py"),
         ("pkg/gone.py:Shape.area", "pkg/gone.py:Shape.grow", "pkg/gone.py:grow.scale", "pkg/gone.py:helper")),
        ("w-6", ("pkg/m.py",), ()),
    ]
    assert locs[0].functions == (("pkg/m.py", "helper", 17, 19),)
    assert sorted(set(asked)) == [("acme/widget", "a" * 40, p) for p in ("pkg/gone.py", "pkg/m.py")]
    files = swebench.tasks(locs, swebench.FILES, lambda r, c: f"{r.replace('/', '+')}@{c[:8]}", dropped)
    assert [t.to_dict() for t in files.tasks[:1]] == [{
        "task_id": "w-0", "query": "issue w-0", "query_type": "issue_to_edit", "corpus": "acme+widget@aaaaaaaa",
        "stratum": "acme/widget", "gold": {"type": "file_set", "file_set": ["pkg/m.py"]}}]
    functions = swebench.tasks(locs, swebench.FUNCTIONS, lambda r, c: "c", dropped)
    assert [t.task_id for t in functions.tasks] == ["w-0", "w-5"]
    assert functions.tasks[0].gold == {"type": "definitions", "ids": ["pkg/m.py:helper"],
                                       "definitions": [["pkg/m.py", "helper", 17, 19]]}
    assert functions.summary("swe-bench")["dropped_by_reason"] == {
        "commit in no mirror": 1, "gold file not indexed": 1, "no gold file indexed": 1, "no gold function": 1,
        "patch only adds files": 1, "repository not declared": 1}
    assert functions.dropped[-1] == {"row": 6, "instance_id": "w-6", "reason": "no gold function",
                                     "detail": "pkg/m.py"}


@pytest.mark.parametrize(("rows", "error"), [
    ([{**row("w-0", patch_of(("a.py", "1"))), "patch": None}],
     "row 0 (w-0): field 'patch' must be a non-empty string, got None"),
    ([{k: v for k, v in row("w-0", "").items() if k != "repo"}],
     "row 0 (w-0): field 'repo' must be a non-empty string"),
    ([{"repo": "acme/widget"}], "row 0: field 'instance_id' must be a non-empty string, got None"),
    ([row("w-0", patch_of(("a.py", "1"))), row("w-1", patch_of(("a.py", "1"))), row("w-0", patch_of(("b.py", "1")))],
     "row 2 (w-0): instance_id repeats row 0"),
    ([row("w-0", "@@ -1 +1 @@\n-a\n+b\n")], "row 0 (w-0): unparsable patch: line 1: a hunk before its file's ---/+++ "
                                          "lines"),
    ([row("w-0", patch_of(("a.py", "1")), commit="abc123")],
     "row 0 (w-0): base_commit 'abc123' is not a full 40-hex commit id"),
])
def test_a_bad_row_is_one_line_naming_file_row_and_instance(tmp_path, rows, error):
    path = write_rows(tmp_path, rows)
    with pytest.raises(CrmatrixError) as e:
        swebench.read_rows(path)
    assert str(e.value).startswith(f"{path}: {error}")
    assert "\n" not in str(e.value)


# --- real tasks, checked by hand against their base commits' files --------------------------------------------


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    """A bare store of the flask, requests, pytest and sympy bundles, and a localize over them
    (the `.py` files indexed)."""
    stores = {}
    for repo in ("pallets/flask", "psf/requests", "pytest-dev/pytest", "sympy/sympy"):
        bundle = SHARED / "corpora" / f"{repo.replace('/', '+')}@swebench.bundle"
        stores[repo] = tmp_path_factory.mktemp("stores") / "repo.git"
        pins.fetch_commits([bundle], stores[repo])

    def indexed(repo, commit):
        return {f.path for f in pins.commit_files(stores[repo], commit, ["**/*.py"], []).files}

    def base_file(repo, commit, path):
        (f,) = pins.commit_files(stores[repo], commit, [path], []).files
        data = pins.read_blobs(stores[repo], [f.blob])[f.blob]
        return extract_source(data, path, "python"), data.decode()

    def localized(benchmark, instances):
        rows = [r for r in swebench.read_rows(SHARED / "data" / "swe-bench" / f"{benchmark}.jsonl")
                if r.instance_id in instances]
        locs, dropped = swebench.localize(rows, set(stores), indexed, base_file)
        assert dropped == []
        return {loc.instance_id: loc for loc in locs}

    return localized


@pytest.fixture(scope="module")
def real(stores):
    """Lite's rows of four tasks whose patches apply where they say."""
    return stores("lite", ("pallets__flask-4045", "psf__requests-2317", "sympy__sympy-13480", "sympy__sympy-20590"))


@needs_shared
def test_flask_4045(real):
    # @@ -188,6 inserts after line 190 (`)` closing super().__init__, indented 8) inside
    # Blueprint.__init__ (lines 171-201, `def` at 4); @@ -360,12 removes 363-368 of
    # Blueprint.add_url_rule (353-369).
    loc = real["pallets__flask-4045"]
    assert loc.files == ("src/flask/blueprints.py",)
    assert loc.functions == (("src/flask/blueprints.py", "__init__", 171, 201),
                             ("src/flask/blueprints.py", "add_url_rule", 353, 369))
    assert loc.function_ids == ("src/flask/blueprints.py:Blueprint.__init__",
                                "src/flask/blueprints.py:Blueprint.add_url_rule")


@needs_shared
def test_requests_2317(real):
    # removes line 16 (an import: module level) and line 428 of Session.request (378-459)
    loc = real["psf__requests-2317"]
    assert loc.files == ("requests/sessions.py",)
    assert loc.functions == (("requests/sessions.py", "request", 378, 459),)
    assert loc.function_ids == ("requests/sessions.py:Session.request",)


@needs_shared
def test_sympy_13480_and_20590(real):
    # 13480 removes line 590 of coth.eval (556-607 with its @classmethod); tanh.eval (415-466)
    # has the same name and is no gold
    loc = real["sympy__sympy-13480"]
    path = "sympy/functions/elementary/hyperbolic.py"
    assert loc.files == (path,)
    assert loc.functions == ((path, "eval", 556, 607),)
    assert loc.function_ids == (f"{path}:coth.eval",)
    gold = loc.task(swebench.FUNCTIONS, "c").gold
    assert is_relevant(gold, Hit(path, "eval", "method", 557, 607, 1.0))
    assert not is_relevant(gold, Hit(path, "eval", "method", 415, 466, 1.0))
    # 20590 inserts `__slots__ = ()` after line 19, in the body of class Printable outside
    # any method (__str__ is 22-24): a file, no function
    loc = real["sympy__sympy-20590"]
    assert (loc.files, loc.functions) == (("sympy/core/_print_helpers.py",), ())


# --- patches that apply at an offset: checked by applying each (`git apply -v` at the base
# commit: the offsets below) and reading which functions git's own diff of the result changes

@pytest.fixture(scope="module")
def offset(stores):
    return {**stores("lite", ("pytest-dev__pytest-5103", "sympy__sympy-13437", "sympy__sympy-14317",
                              "sympy__sympy-20049")),
            **stores("verified", ("sympy__sympy-12489",))}


@needs_shared
def test_gold_functions_where_the_patch_applies(offset):
    # pytest-5103 (+4 lines, 3 hunks): the `all(...)` branch goes into visit_Call_35 and
    # visit_Call_legacy, and a new method _visit_all between them; as stated, the two insertions
    # fall 4 lines early, on lines that no function holds deeper than the inserted code
    loc = offset["pytest-dev__pytest-5103"]
    path = "src/_pytest/assertion/rewrite.py"
    assert loc.functions == ((path, "visit_Call_35", 967, 992), (path, "visit_Call_legacy", 1000, 1028))
    assert loc.function_ids == (f"{path}:AssertionRewriter.visit_Call_35",
                                f"{path}:AssertionRewriter.visit_Call_legacy")
    # 13437 (+10): `if n is S.Infinity` goes into bell.eval, not bell._bell_incomplete_poly
    path = "sympy/functions/combinatorial/numbers.py"
    assert offset["sympy__sympy-13437"].functions == ((path, "eval", 435, 444),)
    assert offset["sympy__sympy-13437"].function_ids == (f"{path}:bell.eval",)
    # 14317 (+41): the line removed is _print_Poly's, not _print_FourierSeries's
    path = "sympy/printing/latex.py"
    assert offset["sympy__sympy-14317"].functions == ((path, "_print_Poly", 1855, 1867),)
    assert offset["sympy__sympy-14317"].function_ids == (f"{path}:LatexPrinter._print_Poly",)
    # 20049 (+25): Point.vel's docstring and body, not Point.v2pt_theory
    path = "sympy/physics/vector/point.py"
    assert offset["sympy__sympy-20049"].functions == ((path, "vel", 499, 524),)
    assert offset["sympy__sympy-20049"].function_ids == (f"{path}:Point.vel",)


@needs_shared
def test_sympy_12489_gold_is_the_methods_its_21_hunks_edit(offset):
    # every hunk applies 4 lines early; as stated they named 23 methods, 9 of them untouched
    # (__sub__, commutes_with, __rxor__, transpositions, __iter__, rank_nonlex, rank, signature,
    # get_precedence_matrix) and missed 6 (__add__, __xor__, __invert__, next_lex, next_nonlex,
    # commutator)
    path = "sympy/combinatorics/permutations.py"
    assert offset["sympy__sympy-12489"].function_ids == tuple(f"{path}:Permutation.{name}" for name in (
        "__new__", "_af_new", "__add__", "rmul_with_af", "mul_inv", "__rmul__", "__mul__", "__pow__", "__xor__",
        "__invert__", "next_lex", "unrank_nonlex", "next_nonlex", "commutator", "unrank_trotterjohnson",
        "next_trotterjohnson", "josephus", "from_inversion_vector", "random", "unrank_lex"))


def test_a_hunk_that_applies_nowhere_names_the_task_file_and_hunk(tmp_path):
    patch = "diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n@@ -2,3 +2,3 @@\n a\n-nowhere\n+x\n c\n"
    (r,) = swebench.read_rows(write_rows(tmp_path, [row("acme__widget-7", patch)]))
    with pytest.raises(CrmatrixError) as e:
        swebench.localize([r], {"acme/widget"}, lambda repo, c: {"m.py"}, lambda repo, c, p: ([], "a\nb\nc\n"))
    assert str(e.value) == ("row 0 (acme__widget-7): the gold patch does not apply at " + "a" * 40
                            + ": m.py: hunk @@ -2,3 +2,3 @@ matches nowhere in the file (its 3 context and "
                            "removed lines, exactly)")


def test_a_gold_file_the_candidate_rule_leaves_out_stays_gold_and_is_counted(tmp_path):
    # w-0 edits a test file and a source file, w-1 a test file alone: both kept (misses for any
    # system, as Agentless and SweRank score them), the test files named apart
    rows = [row("w-0", patch_of(("tests/test_m.py", "18"), ("pkg/m.py", "18"))),
            row("w-1", patch_of(("tests/test_m.py", "5"))), row("w-2", patch_of(("pkg/m.py", "18")))]
    path = write_rows(tmp_path, rows)
    locs, dropped = swebench.localize(
        swebench.read_rows(path), {"acme/widget"}, lambda r, c: {"pkg/m.py"},
        lambda r, c, p: (extract_source(BASE.encode(), p, "python"), BASE), lambda r, c: {"tests/test_m.py"})
    assert dropped == []
    assert [(loc.instance_id, loc.files, loc.function_ids, loc.outside) for loc in locs] == [
        ("w-0", ("pkg/m.py", "tests/test_m.py"), ("pkg/m.py:helper", "tests/test_m.py:helper"), ("tests/test_m.py",)),
        ("w-1", ("tests/test_m.py",), (), ("tests/test_m.py",)),
        ("w-2", ("pkg/m.py",), ("pkg/m.py:helper",), ())]
    files = swebench.tasks(locs, swebench.FILES, lambda r, c: "c", dropped, "agentless")
    assert files.summary("swe-bench")["gold"] == {
        "candidates": "agentless", "tasks_outside_candidates": 2, "files_outside_candidates": 2}
    functions = swebench.tasks(locs, swebench.FUNCTIONS, lambda r, c: "c", dropped, "agentless")
    assert functions.summary("swe-bench")["gold"] == {
        "candidates": "agentless", "tasks_outside_candidates": 1, "files_outside_candidates": 1}
