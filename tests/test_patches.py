"""A unified diff read per file: paths, status, and the old side's removed lines and insertions."""

import pytest

from crmatrix.datasets.patches import FileDiff, Insertion, PatchError, locate, parse_patch, relocate

MULTI_HUNK = """\
diff --git a/pkg/m.py b/pkg/m.py
--- a/pkg/m.py
+++ b/pkg/m.py
@@ -1,4 +1,5 @@
+import os
 import sys
{blank}
 def f():
     return 1
@@ -10,7 +11,9 @@ def g():
     a = 1
-    b = 2
+    b = 3
+    c = 4
     d = 5
+    e = 6
+
     h = 7
-    i = 8
     j = 9
     k = 10
""".format(blank=" ")  # a context line that is blank in the file is one space


def test_multi_hunk_removals_replacements_and_insertions():
    assert parse_patch(MULTI_HUNK) == [FileDiff(
        "pkg/m.py", "pkg/m.py", "modified", removed=(11, 14),
        insertions=(Insertion(0, ("import os",)), Insertion(12, ("    e = 6", ""))))]
    assert parse_patch(MULTI_HUNK)[0].changed_old_lines == (0, 11, 12, 14)


def test_an_added_a_deleted_and_a_renamed_file():
    patch = """\
diff --git a/docs/new.rst b/docs/new.rst
new file mode 100644
--- /dev/null
+++ b/docs/new.rst
@@ -0,0 +1,2 @@
+Title
+=====
diff --git a/old.py b/old.py
deleted file mode 100644
--- a/old.py
+++ /dev/null
@@ -1,3 +0,0 @@
-def gone():
-    pass
-
diff --git a/a/before.py b/a/after.py
similarity index 90%
rename from a/before.py
rename to a/after.py
--- a/a/before.py
+++ b/a/after.py
@@ -2,2 +2,2 @@ def x():
-    return 1
+    return 2
     # end
diff --git a/moved.py b/elsewhere/moved.py
similarity index 100%
rename from moved.py
rename to elsewhere/moved.py
"""
    assert parse_patch(patch) == [
        FileDiff(None, "docs/new.rst", "added", (), (Insertion(0, ("Title", "=====")),)),
        FileDiff("old.py", None, "deleted", (1, 2, 3), ()),
        FileDiff("a/before.py", "a/after.py", "renamed", (2,), ()),
        FileDiff("moved.py", "elsewhere/moved.py", "renamed", (), ()),
    ]


def test_an_insertion_hunk_names_the_line_it_goes_after_and_no_newline_markers_are_passed_over():
    patch = """\
--- a/x.py
+++ b/x.py
@@ -5,0 +6,2 @@
+one
+two
@@ -9 +11 @@
-last
\\ No newline at end of file
+last
\\ No newline at end of file
"""
    assert parse_patch(patch) == [FileDiff("x.py", "x.py", "modified", (9,), (Insertion(5, ("one", "two")),))]


def test_quoted_paths_and_paths_with_spaces():
    patch = """\
diff --git "a/dir/caf\\303\\251 \\"q\\".py" "b/dir/caf\\303\\251 \\"q\\".py"
--- "a/dir/caf\\303\\251 \\"q\\".py"
+++ "b/dir/caf\\303\\251 \\"q\\".py"
@@ -1 +1 @@
-a
+b
diff --git a/my file.py b/my file.py
--- a/my file.py
+++ b/my file.py
@@ -1 +1 @@
-a
+b
"""
    assert [(d.old_path, d.new_path) for d in parse_patch(patch)] == [
        ('dir/café "q".py', 'dir/café "q".py'), ("my file.py", "my file.py")]


@pytest.mark.parametrize(("patch", "error"), [
    ("", "no file header (`diff --git` or `---`/`+++`)"),
    ("just words\n", "no file header (`diff --git` or `---`/`+++`)"),
    ("@@ -1 +1 @@\n-a\n+b\n", "line 1: a hunk before its file's ---/+++ lines"),
    ("--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n-b\n+c\n", "line 3: hunk ends early: 1 old and 1 new lines missing"),
    ("--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n*b\n", "line 5: '*b' does not fit the hunk at line 3 (1 old and 1 new "
                                                   "lines left)"),
    ("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n-b\n", "line 5: '-b' does not fit the hunk at line 3 (0 old and 1 new "
                                               "lines left)"),
    ("--- a/x\n+++ b/x\n@@ one @@\n", "line 3: not a hunk header: '@@ one @@'"),
    ("--- a/x\n+++ b/x\n", "x: a ---/+++ pair without a hunk"),
])
def test_a_malformed_patch_says_where(patch, error):
    with pytest.raises(PatchError) as e:
        parse_patch(patch)
    assert str(e.value) == error


# --- where a hunk applies: as `git apply` finds it (each case checked with git apply -v) -------------------------

def one_file(hunks):
    (diff,) = parse_patch("--- a/f.py\n+++ b/f.py\n" + hunks)
    return diff


REPLACE_X = "@@ -5,3 +5,4 @@\n b\n-x\n+y\n+z\n c\n"  # stated at line 5: `b x c`, x replaced


@pytest.mark.parametrize(("text", "offset"), [
    ("a\na\na\na\nb\nx\nc\na\n", 0),  # where it says
    ("a\na\na\na\na\na\na\nb\nx\nc\n", 3),  # later
    ("a\nb\nx\nc\na\na\na\na\n", -3),  # earlier
    ("a\nb\nx\nc\na\na\nb\nx\nc\na\n", 2),  # nearest: +2 before -3
    ("a\nb\nx\nc\na\na\na\na\na\nb\nx\nc\n", -3),  # nearest: -3 before +5
    ("a\na\nb\nx\nc\na\nb\nx\nc\n", 2),  # a tie (-2, +2): the later, as git's find_pos tries it first
    ("a\na\na\na\nb\nX\nc\n", None),  # no exact match: no fuzz
    ("b\nx\nc\n", -4),  # stated past the end of the file
])
def test_a_hunk_applies_at_the_nearest_exact_match(text, offset):
    (hunk,) = one_file(REPLACE_X).hunks
    lines = text.split("\n")[:-1]
    assert locate(hunk, lines) == offset


def test_a_hunk_stated_at_the_top_or_without_trailing_context_is_held_there():
    # git's match_beginning and match_end: no offset for either
    top = one_file("@@ -1,2 +1,2 @@\n a\n-b\n+B\n").hunks[0]
    assert locate(top, ["a", "b"]) == 0
    assert locate(top, ["z", "a", "b"]) is None
    end = one_file("@@ -2,2 +2,2 @@\n a\n-b\n+B\n").hunks[0]
    assert locate(end, ["z", "a", "b"]) == 0
    assert locate(end, ["z", "z", "a", "b"]) == 1
    assert locate(end, ["z", "a", "b", "z"]) is None


def test_a_diff_without_context_is_anchored_nowhere_as_unidiff_zero_applies_it():
    # `git diff -U0` (a history's diffs): no hunk has trailing context, so git's match_end would
    # hold each at the end of its file; `git apply --unidiff-zero` does not, nor does unidiff_zero
    text = "--- a/f.py\n+++ b/f.py\n@@ -1 +1 @@\n-a\n+A\n@@ -3 +3 @@\n-c\n+C\n"
    zero, plain = parse_patch(text, unidiff_zero=True)[0], parse_patch(text)[0]
    lines = ["a", "b", "c", "d"]
    assert [locate(h, lines, unidiff_zero=True) for h in zero.hunks] == [0, 0]
    assert [locate(h, lines) for h in plain.hunks] == [None, None]  # neither at the end of the file
    assert relocate(zero, "a\nb\nc\nd\n").removed == (1, 3)
    with pytest.raises(PatchError, match=r"f.py: hunk @@ -1 \+1 @@ matches nowhere"):
        relocate(plain, "a\nb\nc\nd\n")
    # stated past a line that differs, it still moves to the nearest match
    assert locate(zero.hunks[1], ["c", "a", "b", "x"], unidiff_zero=True) == -2


def test_relocate_moves_each_hunk_by_its_own_offset():
    diff = one_file(REPLACE_X + "@@ -12,2 +13,3 @@\n k\n+new\n l\n")
    assert (diff.removed, diff.insertions) == ((6,), (Insertion(12, ("new",)),))
    text = "".join(f"{line}\n" for line in ["a", "b", "x", "c", "a", "a", "a", "a", "k", "l", "a", "a"])
    moved = relocate(diff, text)
    assert (moved.removed, moved.insertions) == ((3,), (Insertion(9, ("new",)),))
    assert [h.start for h in moved.hunks] == [2, 9]
    assert moved.changed_old_lines == (3, 9)


def test_a_hunk_that_matches_nowhere_is_an_error_naming_file_and_hunk():
    diff = one_file("@@ -1,3 +1,3 @@\n a\n-b\n+c\n p\n@@ -8,3 +8,3 @@ def g():\n p\n-q\n+Q\n r\n")
    with pytest.raises(PatchError) as e:
        relocate(diff, "a\nb\np\nq\nR\n")
    assert str(e.value) == ("f.py: hunk @@ -8,3 +8,3 @@ matches nowhere in the file (its 3 context and removed "
                            "lines, exactly)")
