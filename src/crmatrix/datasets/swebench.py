"""`swe-bench`: SWE-bench Lite and Verified as localization, an issue against the files and the
functions its gold patch edits, each task at its own base commit.

Rows are the published `{instance_id, repo, base_commit, problem_statement, patch}` (JSONL,
JSON or parquet, crmatrix.datasets.records). The query is the problem statement, whole.
Gold, from the patch read on its old side (crmatrix.datasets.patches), at two levels:

- files: the base-commit paths the patch modifies, deletes or renames. A file the patch only
  adds is not in the base commit and cannot be retrieved: it is left out, and a task whose
  patch only adds files is dropped.
- functions: each hunk moved first to where the patch applies to the base commit's file (a
  patch may apply at an offset, as `git apply` allows; patches.relocate), then for each
  changed old-side line, the innermost function or method of the base
  commit's file whose lines hold it (LocAgent's and SweRank's function level). A removed line
  is where it is. A pure insertion is attributed to the innermost function that holds the line
  before it and whose header is indented less than the first non-blank inserted line (so lines
  added at the end of a function body count for it, while a new method written after another
  counts for neither, nor does a decorator added above a function). A change at module level or
  in a class body outside any method (an import, a class attribute, a new method) has no
  function: such a task keeps its file gold, and has no function gold when all its changes are
  of that kind. A function's lines include its decorators (as the symbols stage extracts it).

What the gold needs of a commit comes in as arguments (`localize`): which repositories are
declared, the paths a commit's corpus indexes (None when no mirror holds the commit), and
the symbols and text of a base-commit file, so it is computed without git.

Drops, counted by reason and each naming its instance: repository not declared, commit in no
mirror, patch only adds files, no gold file indexed (a `.rst`, or a file the corpus's globs
leave out); a gold file outside the indexed files while others remain is counted too (the
task keeps the others). A gold file the candidate rule leaves out (a test file under
`agentless`, crmatrix.corpora.candidates) is no drop: it stays gold, which no system can rank,
as the field scores it, and the summary counts such tasks. Errors, one line naming the file,
row and instance: a missing field, a duplicate instance_id, an unparsable patch; and naming
the row, instance, file and hunk: a hunk that applies nowhere in its base-commit file.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from crmatrix import CrmatrixError
from crmatrix.corpora import candidates
from crmatrix.corpora.pins.gitstore import bundle_commits
from crmatrix.datasets.patches import ADDED, COPIED, FileDiff, PatchError, parse_patch, relocate
from crmatrix.datasets.records import read_records
from crmatrix.datasets.registry import Loaded, PerCommit, Resolving, register
from crmatrix.datasets.rows import check_fields
from crmatrix.datasets.tasks import Task
from crmatrix.symbols import Symbol

if TYPE_CHECKING:
    from crmatrix.config.entries import DatasetEntry

FIELDS = ("instance_id", "repo", "base_commit", "problem_statement", "patch")
QUERY_TYPE = "issue_to_edit"
FUNCTION_KINDS = ("function", "method")
FORMAT = "swe-bench"
FILES, FUNCTIONS = "files", "functions"  # the two gold levels
# Which tasks (a dataset's `tasks:`): all, or only those whose patch edits an existing function
# (function gold non-empty), at either level: SweRank's evaluation set (274 of Lite's 300).
ALL_TASKS, FUNCTION_TASKS = "all", "functions"
SUBSETS = (ALL_TASKS, FUNCTION_TASKS)
_COMMIT = re.compile(r"[0-9a-f]{40}")
_NON_BLANK = re.compile(r"\S")


@dataclass(frozen=True)
class Row:
    """One task as published, its patch read."""

    row: int
    instance_id: str
    repo: str
    base_commit: str
    problem_statement: str
    diffs: tuple[FileDiff, ...]


def read_rows(path: Path) -> list[Row]:
    """The rows of a SWE-bench file in file order, each checked: every field a non-empty string,
    the base commit a full id, the instance_id unique, the patch readable."""
    rows, seen = [], {}
    for i, record in enumerate(read_records(path)):
        instance = record.get("instance_id") if isinstance(record, dict) else None
        where = f"{path}: row {i}" + (f" ({instance})" if isinstance(instance, str) and instance else "")
        check_fields(record, where, FIELDS)
        if instance in seen:
            raise CrmatrixError(f"{where}: instance_id repeats row {seen[instance]}")
        seen[instance] = i
        if not _COMMIT.fullmatch(record["base_commit"]):
            raise CrmatrixError(f"{where}: base_commit {record['base_commit']!r} is not a full 40-hex commit id")
        try:
            diffs = tuple(parse_patch(record["patch"]))
        except PatchError as e:
            raise CrmatrixError(f"{where}: unparsable patch: {e}") from None
        rows.append(Row(i, instance, record["repo"], record["base_commit"], record["problem_statement"], diffs))
    return rows


def gold_files(diffs: Iterable[FileDiff]) -> list[str]:
    """The base-commit paths the patch modifies, deletes or renames (not those it adds or copies to), sorted."""
    return sorted({d.old_path for d in diffs if d.status not in (ADDED, COPIED)})


def _indent(line: str) -> int:
    m = _NON_BLANK.search(line)
    return m.start() if m else len(line)


def _innermost(functions: list[Symbol], line: int, fits: Callable[[Symbol], bool] = lambda s: True) -> Symbol | None:
    """The innermost function holding `line` that `fits` (nested spans: the latest start, then the earliest end)."""
    holding = [s for s in functions if s.start_line <= line <= s.end_line and fits(s)]
    return max(holding, key=lambda s: (s.start_line, -s.end_line), default=None)


def changed_functions(diff: FileDiff, symbols: list[Symbol], text: str) -> list[Symbol]:
    """The functions and methods of the base-commit file (its `symbols` and `text`) that `diff`
    changes, by the rules in this module's docstring, in file order."""
    functions = [s for s in symbols if s.kind in FUNCTION_KINDS]
    lines = text.split("\n")
    found = {_innermost(functions, n) for n in diff.removed}
    for ins in diff.insertions:
        first = next((line for line in ins.lines if line.strip()), None)
        if first is None:  # blank lines only: inside a function when both neighbours are
            found.add(_innermost(functions, ins.after, lambda s, a=ins.after: a + 1 <= s.end_line))
            continue
        depth = _indent(first)
        found.add(_innermost(functions, ins.after, lambda s, d=depth: _indent(lines[s.start_line - 1]) < d))
    found.discard(None)
    return sorted(found, key=lambda s: (s.start_line, s.end_line, s.name))


@dataclass(frozen=True)
class Localization:
    """One task's query and gold: files and functions (spans `[path, name, start, end]`, with
    their `path:qualname` ids) of the base commit."""

    row: int
    instance_id: str
    repo: str
    commit: str
    query: str
    files: tuple[str, ...]
    functions: tuple[tuple[str, str, int, int], ...]
    function_ids: tuple[str, ...]
    outside: tuple[str, ...] = ()  # gold files the candidate rule leaves out: gold no system can rank

    def task(self, level: str, corpus: str) -> Task:
        """The task at one gold level (FILES or FUNCTIONS), on `corpus` (the commit's)."""
        if level == FILES:
            gold = {"type": "file_set", "file_set": list(self.files)}
        elif level == FUNCTIONS:
            gold = {"type": "definitions", "ids": list(self.function_ids),
                    "definitions": [list(f) for f in self.functions]}
        else:
            raise CrmatrixError(f"swe-bench: gold level {level!r}: expected {FILES} or {FUNCTIONS}")
        return Task(self.instance_id, self.query, QUERY_TYPE, gold, corpus, stratum=self.repo)


# (repo, commit) -> the paths the commit's corpus indexes, None when no mirror holds it
IndexedPaths = Callable[[str, str], "Collection[str] | None"]
# (repo, commit, path) -> the symbols and text of that base-commit file
BaseFile = Callable[[str, str, str], tuple[list[Symbol], str]]


def localize(rows: Iterable[Row], repositories: Collection[str], indexed: IndexedPaths, base_file: BaseFile,
             outside: IndexedPaths = lambda repo, commit: ()) -> tuple[list[Localization], list[dict]]:
    """Each row's gold at both levels, and the rows (or gold files) dropped, each
    `{row, instance_id, reason, detail}`. `outside`: the source files of a commit its candidate
    rule leaves out (crmatrix.corpora.candidates); a gold file there stays gold (a miss, as the
    field scores it: Agentless and SweRank report over every task), and `base_file` must read it
    too."""
    out, dropped = [], []
    for r in rows:
        def drop(reason: str, detail: str, r: Row = r) -> None:
            dropped.append({"row": r.row, "instance_id": r.instance_id, "reason": reason, "detail": detail})

        if r.repo not in repositories:
            drop("repository not declared", r.repo)
            continue
        paths = indexed(r.repo, r.base_commit)
        if paths is None:
            drop("commit in no mirror", f"{r.repo}@{r.base_commit}")
            continue
        files = gold_files(r.diffs)
        if not files:
            drop("patch only adds files", ", ".join(sorted(d.new_path for d in r.diffs)))
            continue
        left_out = outside(r.repo, r.base_commit) or ()
        kept = [f for f in files if f in paths or f in left_out]
        if not kept:
            drop("no gold file indexed", ", ".join(files))
            continue
        for f in files:
            if f not in kept:
                drop("gold file not indexed", f)
        spans = []
        for d in r.diffs:
            if d.old_path in kept:
                symbols, text = base_file(r.repo, r.base_commit, d.old_path)
                try:
                    applied = relocate(d, text)
                except PatchError as e:
                    raise CrmatrixError(f"row {r.row} ({r.instance_id}): the gold patch does not apply at "
                                        f"{r.base_commit}: {e}") from None
                spans += [(s.path, s.start_line, s.end_line, s.name, f"{s.path}:{s.qualname}")
                          for s in changed_functions(applied, symbols, text)]
        spans = sorted(set(spans))  # by file, then position
        out.append(Localization(r.row, r.instance_id, r.repo, r.base_commit, r.problem_statement, tuple(kept),
                                tuple((p, name, a, b) for p, a, b, name, _ in spans), tuple(s[4] for s in spans),
                                tuple(f for f in kept if f not in paths)))
    return out, dropped


def tasks(localizations: Iterable[Localization], level: str, corpus_of: Callable[[str, str], str],
          dropped: Iterable[dict] = (), candidates: str | None = None, subset: str = ALL_TASKS) -> Loaded:
    """The tasks at one gold level, each on its commit's corpus (`corpus_of(repo, commit)`), with
    the drops so far; at the function level a task with no changed function is dropped too
    (`no gold function`: its changes lie outside any function), and at any level under `subset`
    FUNCTION_TASKS (SweRank's tasks: those that edit an existing function). `candidates`: the
    rule that chose the files ranked, reported in the summary's `gold` with the tasks and gold
    files it leaves out and the subset (`describe_candidates`)."""
    if subset not in SUBSETS:
        raise CrmatrixError(f"swe-bench: tasks {subset!r}: expected one of {', '.join(SUBSETS)}")
    out, drops, outside = [], list(dropped), {}
    for loc in localizations:
        if (level == FUNCTIONS or subset == FUNCTION_TASKS) and not loc.functions:
            drops.append({"row": loc.row, "instance_id": loc.instance_id, "reason": "no gold function",
                          "detail": ", ".join(loc.files)})
            continue
        out.append(loc.task(level, corpus_of(loc.repo, loc.commit)))
        outside[loc.instance_id] = loc.outside
    if candidates is None:
        return Loaded(out, drops)
    return Loaded(out, drops, describe_gold=lambda ts: describe_candidates(
        candidates, [outside[t.task_id] for t in ts], subset))


def describe_candidates(rule: str, outside: list[tuple[str, ...]], subset: str = ALL_TASKS) -> dict:
    """What the summary says of the candidate set: its rule, and how many tasks have a gold file it
    leaves out (each such task a miss at every k), with how many such files; and the subset of
    tasks when it is not all of them."""
    return {"candidates": rule, "tasks_outside_candidates": sum(1 for o in outside if o),
            "files_outside_candidates": sum(map(len, outside)), **({"tasks": subset} if subset != ALL_TASKS else {})}


def per_commit(name: str, entry: DatasetEntry, resolving: Resolving) -> PerCommit:
    """Dataset `name` split into one dataset per declared repository its rows name
    (`NAME-REPOSITORY`), each on that repository's store under the dataset's candidate rule
    (`candidates.store`) at the commits its rows name that a mirror holds (all of them when no
    mirror holds the repository: the fetch names what is missing); the rows of undeclared
    repositories counted. The rows are read here by `read_rows`, as the loader and rule
    localize_tasks read them: they name the corpora."""
    where = f"datasets.{name}"
    for key, value in (("repository", entry.repository), ("history", entry.history)):
        if value is not None:
            raise CrmatrixError(f"{where}.{key}: only a history dataset (format: history) has it")
    rule = candidates.check(entry.candidates or candidates.DEFAULT, f"{where}.candidates")
    rows = read_rows(Path(entry.file))
    declared = {r.name: key for key, r in resolving.repositories.items()}
    out = PerCommit()
    for repo in sorted({r.repo for r in rows}):
        mine = {r.base_commit for r in rows if r.repo == repo}
        if repo not in declared:
            out.undeclared[repo] = sum(1 for r in rows if r.repo == repo)
            continue
        key = declared[repo]
        split, corpus = f"{name}-{key}", candidates.store(key, rule, candidates.DEFAULT)
        if split in resolving.datasets:
            raise CrmatrixError(f"datasets.{split}: the name of dataset {name}'s rows of repository {repo}; "
                                "rename one of them")
        out.datasets[split] = {**entry.conf, "candidates": rule, "corpus": corpus, "repository": repo}
        mirrored = bundle_commits(resolving.repositories[key].git, list(resolving.mirrors))
        out.commits[corpus] = mine & set(mirrored) if mirrored else mine
    return out


@register(FORMAT, localization=True, reads_tree=True, per_commit=per_commit)
def load(path: Path, corpus: str, manifest: dict, symbols: list[Symbol], tree: Path) -> Loaded:
    """The rows at the one commit a git corpus is pinned at, localized against its tree (as
    `crmatrix dataset show swe-bench FILE --corpus DIR` reads a checkout), file-level gold; a
    row at another commit is dropped. In a matrix, a swe-bench dataset is split by repository
    and each row gets its own commit (`repositories:`, rule localize_tasks)."""
    commit = manifest["pin"].get("commit")
    if commit is None:
        raise CrmatrixError(f"{path}: a swe-bench row is scored at its own commit: a {manifest['pin']['kind']} "
                            "corpus has none (declare the repository under repositories: in a config)")
    rows = read_rows(Path(path))
    paths = {f["path"] for f in manifest["files"]}
    by_path: dict[str, list[Symbol]] = {}
    for s in symbols:
        by_path.setdefault(s.path, []).append(s)
    at_commit = [r for r in rows if r.base_commit == commit]
    dropped = [{"row": r.row, "instance_id": r.instance_id, "reason": "another commit than the corpus's",
                "detail": f"{r.repo}@{r.base_commit}"} for r in rows if r.base_commit != commit]
    found, drops = localize(at_commit, {r.repo for r in at_commit}, lambda repo, c: paths,
                            lambda repo, c, p: (by_path.get(p, []), (Path(tree) / p).read_text(encoding="utf-8")))
    return tasks(found, FILES, lambda repo, c: corpus, dropped + drops)
