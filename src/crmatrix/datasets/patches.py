"""A unified diff (`git diff`'s, as SWE-bench publishes its gold patches) read per file: its old and
new path, what happened to it, and which lines of the OLD side it changes.

Written here rather than taken from PyPI (`unidiff`, `whatthepatch`): what localization
needs is small (paths, status, old-side line numbers) and must fail with a reason on a
malformed hunk rather than guess, and the whole reader is shorter than the glue around a
library would be.

Old-side changes: every removed line by its number; and each run of added lines with no
removed line in the same change (a pure insertion) by its position, the old line it goes in
after (0: the top of the file), with the lines it inserts. Added lines beside removed ones
replace them: the removed lines locate that change.

Those numbers are the hunk headers' as stated. A patch may apply at an offset (SWE-bench's do,
in 37 hunks of 10 tasks): `relocate` moves each hunk to where `git apply` puts it in a given
old file, its preimage (context and removed lines) matched exactly: at the stated line, else at
the nearest line that matches, a later one before an earlier one at the same distance (git's
`find_pos`, checked against `git apply -v`); a hunk stated at line 1 must match at the top and
one without trailing context at the end, as git demands without --unidiff-zero. A diff made
without context (`git diff -U0`, as crmatrix.datasets.history reads a commit's) is read with
`unidiff_zero`, as `git apply --unidiff-zero` reads it: no hunk anchored at the top or the end.
No fuzz: a hunk whose preimage matches nowhere is an error naming it.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass, field, replace

MODIFIED, ADDED, DELETED, RENAMED, COPIED = "modified", "added", "deleted", "renamed", "copied"
_HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_DEV_NULL = "/dev/null"


class PatchError(ValueError):
    """A patch that cannot be read; the message says where and why."""


@dataclass(frozen=True)
class Insertion:
    """Added lines with no removed line beside them, going in after old line `after`."""

    after: int
    lines: tuple[str, ...]


@dataclass(frozen=True)
class Hunk:
    """One hunk as written: its header, its old start as stated, its preimage (the old side's
    lines it expects: context and removed), its trailing context count, and the old-side
    changes it makes, by their stated numbers."""

    header: str
    start: int
    preimage: tuple[str, ...]
    trailing: int
    removed: tuple[int, ...]
    insertions: tuple[Insertion, ...]


@dataclass(frozen=True)
class FileDiff:
    """One file of a patch. `old_path` is None for an added file, `new_path` for a deleted one."""

    old_path: str | None
    new_path: str | None
    status: str  # MODIFIED, ADDED, DELETED, RENAMED or COPIED
    removed: tuple[int, ...]  # old-side numbers of the removed lines, ascending
    insertions: tuple[Insertion, ...]  # in old-side order
    # how the changes were written, one per hunk; two diffs that change the same lines are equal
    hunks: tuple[Hunk, ...] = field(default=(), compare=False, repr=False)
    unidiff_zero: bool = field(default=False, compare=False, repr=False)  # made without context (-U0)

    @property
    def changed_old_lines(self) -> tuple[int, ...]:
        """The old side's changed lines: each removed line, and each insertion's position
        (the line it goes in after; 0 for the top of the file)."""
        return tuple(sorted({*self.removed, *(i.after for i in self.insertions)}))


def _unquote(path: str) -> str:
    """A path as git writes it: C-quoted when it holds special characters (its bytes as octal escapes)."""
    if path.startswith('"') and path.endswith('"') and len(path) >= 2:
        raw = codecs.escape_decode(path[1:-1].encode("utf-8"))[0]
        return raw.decode("utf-8", errors="surrogateescape")
    return path


def _side(value: str, prefix: str) -> str | None:
    """The path of a `---`/`+++` line's value (its timestamp cut, `a/`/`b/` dropped), None for /dev/null."""
    path = _unquote(value.split("\t", 1)[0].rstrip())
    if path == _DEV_NULL:
        return None
    return path.removeprefix(prefix)


class _File:
    """One file's section as it is read."""

    def __init__(self, old: str | None, new: str | None, git: bool):
        self.old, self.new, self.git = old, new, git
        self.sides = False  # its ---/+++ lines read
        self.mode_status: str | None = None  # from git's extended header: new/deleted file, rename, copy
        self.removed: list[int] = []
        self.insertions: list[Insertion] = []
        self.hunks: list[Hunk] = []

    def diff(self) -> FileDiff:
        if self.mode_status == ADDED or self.old is None:
            status = ADDED
        elif self.mode_status == DELETED or self.new is None:
            status = DELETED
        elif self.mode_status in (RENAMED, COPIED):
            status = self.mode_status
        else:
            status = RENAMED if self.old != self.new else MODIFIED
        old = None if status == ADDED else self.old
        new = None if status == DELETED else self.new
        return FileDiff(old, new, status, tuple(sorted(self.removed)), tuple(self.insertions), tuple(self.hunks))


def _git_paths(line: str) -> tuple[str, str]:
    """The two paths of `diff --git a/X b/Y` (each may be quoted); for unquoted paths with
    spaces, the split that gives equal names (as git does for a non-rename)."""
    rest = line[len("diff --git "):]
    if rest.startswith('"'):
        end = rest.index('"', 1) + 1
        while rest[end - 2] == "\\":  # an escaped quote inside
            end = rest.index('"', end) + 1
        return _unquote(rest[:end]).removeprefix("a/"), _unquote(rest[end:].strip()).removeprefix("b/")
    if rest.endswith('"'):
        start = rest.rindex(' "')
        return rest[:start].removeprefix("a/"), _unquote(rest[start + 1:]).removeprefix("b/")
    half = len(rest) // 2
    if rest[half] == " " and rest[:half].removeprefix("a/") == rest[half + 1:].removeprefix("b/"):
        return rest[:half].removeprefix("a/"), rest[half + 1:].removeprefix("b/")
    old, _, new = rest.partition(" b/")
    return old.removeprefix("a/"), new


def parse_patch(text: str, unidiff_zero: bool = False) -> list[FileDiff]:
    """Every file of a unified diff, in patch order: git's (`diff --git` sections, with their
    extended headers) or plain `---`/`+++` pairs; `unidiff_zero`: made without context (the
    module's docstring). Raises PatchError naming the line at fault: a
    hunk outside a file, a hunk whose lines do not add up to its header's counts, a plain
    section without a hunk, or no file at all. Text around the files (a message, `index` lines)
    is passed over."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    files: list[_File] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("diff --git "):
            files.append(_File(*_git_paths(line), git=True))
            i += 1
            while i < len(lines) and not lines[i].startswith(("diff --git ", "--- ", "@@ ")):
                _header(files[-1], lines[i])
                i += 1
        elif line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            old, new = _side(line[4:], "a/"), _side(lines[i + 1][4:], "b/")
            current = files[-1] if files else None
            if current is not None and current.git and not current.sides:
                current.old, current.new = old, new  # the git section's own sides (/dev/null when added or deleted)
            else:
                files.append(_File(old, new, git=False))
            files[-1].sides = True
            i += 2
        elif line.startswith("@@ "):
            if not files or not files[-1].sides:
                raise PatchError(f"line {i + 1}: a hunk before its file's ---/+++ lines")
            i = _hunk(files[-1], lines, i)
        else:
            i += 1
    if not files:
        raise PatchError("no file header (`diff --git` or `---`/`+++`)")
    for f in files:
        if not f.git and not (f.removed or f.insertions):
            raise PatchError(f"{f.old or f.new}: a ---/+++ pair without a hunk")
    return [replace(f.diff(), unidiff_zero=unidiff_zero) for f in files]


def _header(f: _File, line: str) -> None:
    """One line of git's extended header."""
    if line.startswith("new file mode"):
        f.mode_status = ADDED
    elif line.startswith("deleted file mode"):
        f.mode_status = DELETED
    elif line.startswith("rename from "):
        f.mode_status, f.old = RENAMED, _unquote(line[len("rename from "):])
    elif line.startswith("rename to "):
        f.mode_status, f.new = RENAMED, _unquote(line[len("rename to "):])
    elif line.startswith("copy from "):
        f.mode_status, f.old = COPIED, _unquote(line[len("copy from "):])
    elif line.startswith("copy to "):
        f.mode_status, f.new = COPIED, _unquote(line[len("copy to "):])


def _hunk(f: _File, lines: list[str], i: int) -> int:
    """Read the hunk whose header is lines[i] into `f`; returns the index after it."""
    m = _HUNK.match(lines[i])
    if not m:
        raise PatchError(f"line {i + 1}: not a hunk header: {lines[i][:80]!r}")
    start, old_count = int(m[1]), int(m[2] if m[2] is not None else 1)
    new_count = int(m[4] if m[4] is not None else 1)
    # The next old line to be read: a hunk that removes nothing names the line it inserts after.
    old = start if old_count else start + 1
    old_left, new_left = old_count, new_count
    header = i
    i += 1
    block_start, added, removed_in_block = old, [], False
    preimage, removed, insertions = [], [], []
    trailing = 0  # context lines after the last change

    def close_block() -> None:
        if added and not removed_in_block:
            insertions.append(Insertion(block_start - 1, tuple(added)))

    while old_left or new_left:
        if i >= len(lines):
            raise PatchError(f"line {header + 1}: hunk ends early: {old_left} old and {new_left} new lines "
                             "missing")
        line = lines[i]
        kind = line[:1]
        if kind == "\\":  # "\ No newline at end of file"
            i += 1
            continue
        if kind in (" ", "") and old_left and new_left:  # context ("" where trailing blanks were trimmed)
            close_block()
            preimage.append(line[1:])
            trailing += 1
            old, old_left, new_left = old + 1, old_left - 1, new_left - 1
            block_start, added, removed_in_block = old, [], False
        elif kind in ("-", "+") and (old_left if kind == "-" else new_left):
            trailing = 0
            if kind == "-":
                preimage.append(line[1:])
                removed.append(old)
                removed_in_block = True
                old, old_left = old + 1, old_left - 1
            else:
                added.append(line[1:])
                new_left -= 1
        else:
            raise PatchError(f"line {i + 1}: {line[:80]!r} does not fit the hunk at line {header + 1} "
                             f"({old_left} old and {new_left} new lines left)")
        i += 1
    close_block()
    f.removed += removed
    f.insertions += insertions
    f.hunks.append(Hunk(m[0], start, tuple(preimage), trailing, tuple(removed), tuple(insertions)))
    while i < len(lines) and lines[i].startswith("\\"):
        i += 1
    return i


def locate(hunk: Hunk, lines: list[str], unidiff_zero: bool = False) -> int | None:
    """Where `git apply` puts `hunk` in a file of `lines` (no line endings): the offset from its
    stated start, None when its preimage matches nowhere (module docstring); `unidiff_zero`: as
    `git apply --unidiff-zero`, neither the top nor the end anchors it."""
    size, origin = len(hunk.preimage), hunk.start - 1
    if not size:
        return 0  # nothing to match: where it says
    # git's match_beginning and match_end, which --unidiff-zero turns off
    top, end = not unidiff_zero and hunk.start <= 1, not unidiff_zero and not hunk.trailing
    stated = min(origin, len(lines))  # a start past the end searches from the end, as git does

    def fits(pos: int) -> bool:
        return ((not top or pos == 0) and (not end or pos + size == len(lines))
                and tuple(lines[pos:pos + size]) == hunk.preimage)

    for distance in range(max(stated, len(lines) - stated) + 1):
        for pos in (stated + distance, stated - distance) if distance else (stated,):
            if 0 <= pos <= len(lines) - size and fits(pos):
                return pos - origin
    return None


def relocate(diff: FileDiff, text: str) -> FileDiff:
    """`diff` with each hunk's changes moved to where `git apply` applies it to the old file
    `text`. Raises PatchError naming the file and the hunk's header when a hunk matches nowhere."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # the end of the last line, not a line
    hunks = []
    for h in diff.hunks:
        offset = locate(h, lines, diff.unidiff_zero)
        if offset is None:
            raise PatchError(f"{diff.old_path}: hunk {h.header} matches nowhere in the file (its "
                             f"{len(h.preimage)} context and removed lines, exactly)")
        hunks.append(replace(h, start=h.start + offset, removed=tuple(n + offset for n in h.removed),
                             insertions=tuple(Insertion(i.after + offset, i.lines) for i in h.insertions)))
    return replace(diff, removed=tuple(sorted(n for h in hunks for n in h.removed)),
                   insertions=tuple(i for h in hunks for i in h.insertions), hunks=tuple(hunks))
