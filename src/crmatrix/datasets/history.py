"""`history`: localization tasks derived from a repository's own git history, in any language a
symbol extractor knows. A commit's message (subject and body, trailers such as `Signed-off-by:`
cut) is the query; the gold is the existing non-test source files it modifies
(crmatrix.corpora.testfiles), and at the function level the functions whose lines it changes;
the corpus searched is the repository at the commit's PARENT. Tasks can be taken from after a
model's training cutoff (`since:`), which a published benchmark's cannot.

Each commit is read with git from the repository's history bundle (crmatrix.corpora.pins.gitstore)
and kept as a SWE-bench row would be (`swebench.Row`: its parent the base commit, its diff the
patch), so the rest is SWE-bench's: gold files and functions by `swebench.localize`, each task at
its own version of one store of the repository (rule localize_tasks).

Rules, in the order a commit meets them (its first one is its drop reason, counted), each an
option of the dataset's `history:` with its default in `DEFAULTS`:

- `outside window`: committed before `since` or on/after `until` (committer dates, ISO days at
  00:00 UTC), or not among the `last` N commits of the history (git log's order, newest first);
- `merge`; `root commit` (no parent in the history: its first commit, or where it is cut);
- `bot author`: an author name or email holding one of `BOTS`;
- `revert`, `release` (a version bump, a release), `dependency bump`: by the message (`_REVERT`,
  `_RELEASE`, `_DEPENDENCY`);
- `short message`: fewer than `min_words` words (runs of letters, digits and `_`);
- `only adds or deletes files`: it modifies no file;
- `no source file modified`: it modifies only tests, docs and other files;
- `too many files`: it modifies more than `max_files` source files;
- `formatting only`: its source files' diff is empty ignoring whitespace (`git diff -w`); a
  source file whose changes are all whitespace is no gold either, and the function gold is read
  from the `-w` diff;
- `not sampled`: when `sample` is set and more are kept, a seeded sample (`seed`) of that size.

Leakage is measured, not hidden: a task whose message names a gold file's path or basename, or
a changed function's name (a whole word, case-sensitive, of 3 characters or more), has the query
type `commit_to_edit_leaky` (else `commit_to_edit`) and the stratum `leaky` (else `clean`): each
run reports its metrics per query type, the phase matrix's benchmark section per stratum (with
intervals) beside the figure over all tasks, and the dataset summary gives their share under `gold`.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime
from pathlib import Path, PurePosixPath

from crmatrix import CrmatrixError
from crmatrix.corpora.languages import LANGUAGES
from crmatrix.corpora.pins.gitstore import HISTORY, git
from crmatrix.corpora.testfiles import is_source
from crmatrix.datasets import swebench
from crmatrix.datasets.patches import MODIFIED, FileDiff, PatchError, parse_patch
from crmatrix.datasets.registry import Loaded, PerCommit, Resolving, register
from crmatrix.datasets.tasks import Task
from crmatrix.symbols import Symbol

FORMAT = "history"
QUERY_TYPE, LEAKY_TYPE = "commit_to_edit", "commit_to_edit_leaky"
CLEAN, LEAKY = "clean", "leaky"  # a task's stratum: the matrix's benchmark table gives each its own figures
DEFAULTS = {"since": None, "until": None, "last": None, "max_files": 5, "min_words": 5, "sample": None, "seed": 0}
BOTS = ("[bot]", "dependabot", "renovate", "greenkeeper", "github-actions", "pre-commit-ci", "snyk-bot")
MIN_NAME = 3  # a changed function's name shorter than this is not looked for in the message
_TRAILER = re.compile(r"^(Signed-off-by|Co-authored-by|Reviewed-by|Acked-by|Tested-by|Change-Id):", re.I | re.M)
_REVERT = re.compile(r"^revert\b|\nThis reverts commit [0-9a-f]{7,}", re.I)
_RELEASE = re.compile(r"^(v?\d+\.\d+(\.\d+)*\b|chore\(release\)|release\b|releasing\b|prepar\w* (for )?(the )?release"
                      r"|cut (a )?release|(bump|bumped|update|set)( the)? version\b|version (bump|\d)|new version\b)",
                      re.I)
_DEPENDENCY = re.compile(r"^((build|chore|fix)\(deps(-dev)?\)|deps\b|bump [\w@/.-]+ from \S+ to \S+"
                         r"|(update|upgrade|bump)s?( the)? (dep|deps|dependency|dependencies)\b"
                         r"|(update|upgrade|bump) [\w@/.-]+ to v?\d+(\.\d+)*\s*$)", re.I)
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Options:
    """The rules' settings (the module's docstring); `from_conf` checks a dataset's `history:`."""

    since: str | None = None
    until: str | None = None
    last: int | None = None
    max_files: int = 5
    min_words: int = 5
    sample: int | None = None
    seed: int = 0

    @classmethod
    def from_conf(cls, conf: dict | None, where: str = "history") -> Options:
        conf = dict(conf or {})
        unknown = sorted(set(conf) - set(DEFAULTS))
        if unknown:
            raise CrmatrixError(f"{where}: unknown option(s) {', '.join(unknown)} (expected: {', '.join(DEFAULTS)})")
        out = {**DEFAULTS, **conf}
        for key in ("since", "until"):
            if out[key] is not None:
                try:
                    out[key] = date.fromisoformat(str(out[key])).isoformat()
                except ValueError:
                    raise CrmatrixError(f"{where}.{key}: {out[key]!r} is not a day (YYYY-MM-DD)") from None
        for key in ("last", "max_files", "min_words", "sample", "seed"):
            value = out[key]
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 0
                                      or (value == 0 and key in ("last", "max_files", "sample"))):
                raise CrmatrixError(f"{where}.{key}: {value!r}: expected a whole number"
                                    + (" of 1 or more" if key in ("last", "max_files", "sample") else " >= 0"))
        return cls(**out)

    def to_conf(self) -> dict:
        return {k: getattr(self, k) for k in DEFAULTS}


@dataclass(frozen=True)
class Commit:
    """A commit as `git log` tells it: the files it changes by status (`M`, `A`, `D`, `T`)."""

    index: int  # its place in the log, newest first
    sha: str
    parents: tuple[str, ...]
    author: str
    email: str
    time: int  # committer date, seconds since the epoch (git's own time zones can be malformed)
    message: str
    changes: tuple[tuple[str, str], ...]


def read_log(git_dir: Path, ref: str = HISTORY) -> list[Commit]:
    """Every commit reachable from `ref`, in git log's order (newest first), with the files each
    changes (renames as a deletion and an addition). A path git would quote (one holding a
    quote, a backslash or a control character) stays quoted: no language's file, never gold."""
    out = git(["--git-dir", git_dir, "-c", "core.quotePath=false", "log", "--no-renames", "--name-status",
               "--no-color", "--format=%x00%H%x1f%P%x1f%an%x1f%ae%x1f%ct%x1f%B%x1f", ref, "--"],
              f"{git_dir}: git log {ref}").decode("utf-8", "replace")
    commits = []
    for i, record in enumerate(out.split("\0")[1:]):
        sha, parents, author, email, when, message, files = record.split("\x1f", 6)
        changes = tuple((line[0], line.split("\t", 1)[1]) for line in files.splitlines() if "\t" in line)
        commits.append(Commit(i, sha, tuple(parents.split()), author, email, int(when), message, changes))
    return commits


def query_of(message: str) -> str:
    """A message as a query: its trailer lines cut, stripped."""
    return "\n".join(line for line in message.strip().splitlines() if not _TRAILER.match(line)).strip()


def _in_window(c: Commit, opts: Options) -> bool:
    def day(d: str) -> float:
        return datetime.fromisoformat(d).replace(tzinfo=UTC).timestamp()

    return ((opts.last is None or c.index < opts.last) and (opts.since is None or c.time >= day(opts.since))
            and (opts.until is None or c.time < day(opts.until)))


def gold_candidates(c: Commit) -> list[str]:
    """The source files (not tests) a commit modifies, sorted."""
    return sorted({p for s, p in c.changes if s == "M" and is_source(p)})


def reason(c: Commit, opts: Options) -> str | None:
    """The first rule (before the diff is read) that drops `c`, None when it passes them all."""
    query, subject = query_of(c.message), c.message.strip().split("\n", 1)[0]
    checks = (
        ("outside window", not _in_window(c, opts)),
        ("merge", len(c.parents) > 1),
        ("root commit", not c.parents),
        ("bot author", any(b in f"{c.author} {c.email}".lower() for b in BOTS)),
        ("revert", bool(_REVERT.search(c.message.strip()))),
        ("release", bool(_RELEASE.match(subject))),
        ("dependency bump", bool(_DEPENDENCY.match(subject))),
        ("short message", len(_WORD.findall(query)) < opts.min_words),
        ("only adds or deletes files", not any(s == "M" for s, _ in c.changes)),
        ("no source file modified", not gold_candidates(c)),
        ("too many files", len(gold_candidates(c)) > opts.max_files),
    )
    return next((why for why, failed in checks if failed), None)


def whitespace_diffs(git_dir: Path, commits: Iterable[str]) -> dict[str, list[FileDiff] | None]:
    """Each commit's diff against its first parent ignoring whitespace (`git log -p -w -U0`, one
    process), of the language files only (`LANGUAGES`); None for a diff that cannot be read."""
    asked = list(commits)
    if not asked:
        return {}
    out = git(["--git-dir", git_dir, "-c", "core.quotePath=false", "log", "--no-walk=unsorted", "--stdin", "-p",
               "-w", "-U0", "--no-renames", "--no-color", "--no-ext-diff", "--format=%x00%H", "--",
               *(f"*{ext}" for ext in LANGUAGES)], f"{git_dir}: git log -p -w",
              "".join(f"{c}\n" for c in asked).encode()).decode("utf-8", "replace")
    diffs: dict[str, list[FileDiff] | None] = {c: [] for c in asked}
    for record in out.split("\0")[1:]:
        sha, _, text = record.partition("\n")
        if "diff --git " in text:
            try:
                diffs[sha] = parse_patch(text, unidiff_zero=True)  # -U0: anchored nowhere, as git applies it
            except PatchError:
                diffs[sha] = None
    return diffs


def instance_id(repo: str, sha: str) -> str:
    """A task's id: the repository's owner and name, and the commit's first 12 digits."""
    return f"{repo.replace('/', '__')}-{sha[:12]}"


def derive(git_dir: Path, repo: str, opts: Options, ref: str = HISTORY) -> tuple[list[swebench.Row], list[dict]]:
    """The history of `ref` in `git_dir` as rows (the module's rules), in log order, and every
    commit dropped, each `{row, instance_id, reason, detail}` (row: its place in the log)."""
    commits = read_log(Path(git_dir), ref)
    dropped, candidates = [], []

    def drop(c: Commit, why: str, detail: str) -> None:
        dropped.append({"row": c.index, "instance_id": instance_id(repo, c.sha), "reason": why, "detail": detail})

    for c in commits:
        why = reason(c, opts)
        if why is None:
            candidates.append(c)
        else:
            drop(c, why, c.message.strip().split("\n", 1)[0][:120])
    diffs = whitespace_diffs(Path(git_dir), [c.sha for c in candidates])
    kept = []
    for c in candidates:
        golds = set(gold_candidates(c))
        mine = diffs[c.sha]
        if mine is None:
            drop(c, "unreadable diff", c.sha)
            continue
        changed = [d for d in mine if d.status == MODIFIED and d.old_path in golds and (d.removed or d.insertions)]
        if not changed:
            drop(c, "formatting only", ", ".join(sorted(golds)))
            continue
        kept.append(swebench.Row(c.index, instance_id(repo, c.sha), repo, c.parents[0], query_of(c.message),
                                 tuple(changed)))
    if opts.sample is not None and len(kept) > opts.sample:
        chosen = set(random.Random(opts.seed).sample(range(len(kept)), opts.sample))
        for i, r in enumerate(kept):
            if i not in chosen:
                dropped.append({"row": r.row, "instance_id": r.instance_id, "reason": "not sampled", "detail": ""})
        kept = [r for i, r in enumerate(kept) if i in chosen]
    return kept, sorted(dropped, key=lambda d: d["row"])


def leaked(query: str, files: Iterable[str], functions: Iterable[str]) -> list[str]:
    """What of the gold a message names: a file's path or basename, a function's name (a whole
    word, case-sensitive, MIN_NAME characters or more), sorted."""
    names = {n for f in files for n in (f, PurePosixPath(f).name) if _names(query, n)}
    names |= {n for n in functions if len(n) >= MIN_NAME and _names(query, n)}
    return sorted(names)


def _names(query: str, name: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(name)}(?!\w)", query) is not None


def mark_leaky(loaded: Loaded, found: Iterable[swebench.Localization]) -> Loaded:
    """The tasks with their query type and stratum by leakage (`leaked`), and a summary of it
    beside what `loaded` says of its gold (its candidate rule): how many are leaky, their share,
    and what each names."""
    named = {loc.instance_id: leaked(loc.query, loc.files, (f[1] for f in loc.functions)) for loc in found}
    tasks = [replace(t, query_type=LEAKY_TYPE if named[t.task_id] else QUERY_TYPE,
                     stratum=LEAKY if named[t.task_id] else CLEAN) for t in loaded.tasks]

    def describe(ts: list[Task]) -> dict:
        leaky = {t.task_id: named[t.task_id] for t in ts if t.query_type == LEAKY_TYPE}
        return {**(loaded.describe_gold(ts) if loaded.describe_gold else {}), "leaky": len(leaky),
                "leaky_share": round(len(leaky) / len(ts), 4) if ts else 0.0, "leaky_names": leaky}

    return Loaded(tasks, loaded.dropped, describe)


def per_commit(name: str, conf: dict, resolving: Resolving) -> PerCommit:
    """The format's resolution hook: crmatrix.datasets.histories, which reads this module's rules."""
    from crmatrix.datasets import histories

    return histories.per_commit(name, conf, resolving)


@register(FORMAT, localization=True, per_commit=per_commit)
def load(path: Path, corpus: str, manifest: dict, symbols: list[Symbol]) -> Loaded:
    """A history's tasks each need their parent's version of the repository: they are made in a
    matrix, from a `repositories:` entry (rule localize_tasks), never at one commit."""
    raise CrmatrixError(f"{path}: a history dataset's tasks are each at their own commit: name a repository of "
                        "repositories: in a config (docs/public-benchmarks.md, a repository's own history)")
