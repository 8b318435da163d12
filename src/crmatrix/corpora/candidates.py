"""Which of a repository's files a swe-bench or history dataset ranks: the candidate set, by a
rule the field states (docs/public-benchmarks.md names each one's source). The corpus's globs choose the
source files first (`**/*.py`); a rule then leaves test code out, as each paper does:

- `all`: every file the globs choose (tests included).
- `agentless`: Agentless's rule (its repository structure filtered by `filter_out_test_files`):
  no file or directory whose name starts with `test`. The field's practice, and the default.
- `swerank`: SweRank's literal rule: no path holding `test` anywhere. It leaves out source files
  too (`src/_pytest/unittest.py`, `sympy/utilities/randtest.py`).
- `locagent`: LocAgent's BM25 retriever's excludes: `**/test/**`, `**/tests/**`,
  `**/test_*.py`, `**/*_test.py`.
- `language`: crmatrix's own, per language (crmatrix.corpora.testfiles: pytest's, `go test`'s,
  Jest's, Cargo's, Maven's conventions): no test. A history dataset's gold is drawn from
  exactly these files, so it is that format's default.

Each rule is a plain function of the path (case as written: `Tests/` is kept by all of them).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from crmatrix import CrmatrixError
from crmatrix.corpora.testfiles import is_test

ALL, AGENTLESS, SWERANK, LOCAGENT, LANGUAGE = "all", "agentless", "swerank", "locagent", "language"
DEFAULT = AGENTLESS  # what the field does: Agentless, and the work that follows it


def _agentless(path: str) -> bool:
    return not any(part.startswith("test") for part in path.split("/"))


def _swerank(path: str) -> bool:
    return "test" not in path


def _locagent(path: str) -> bool:
    *dirs, name = path.split("/")
    return not ({"test", "tests"} & set(dirs) or (name.startswith("test_") and name.endswith(".py"))
                or name.endswith("_test.py"))


RULES: dict[str, Callable[[str], bool]] = {
    ALL: lambda path: True, AGENTLESS: _agentless, SWERANK: _swerank, LOCAGENT: _locagent,
    LANGUAGE: lambda path: not is_test(path)}


def check(rule: object, where: str) -> str:
    """`rule` when it names a rule; else one error naming `where` and the rules there are."""
    if rule not in RULES:
        raise CrmatrixError(f"{where}: {rule!r} is not a candidate rule (allowed: {', '.join(sorted(RULES))})")
    return rule


def candidate(rule: str, path: str) -> bool:
    """Whether `rule` keeps `path` (a repository-relative path, `/`-separated)."""
    return RULES[rule](path)


def select(rule: str, paths: Iterable[str]) -> list[str]:
    """The paths `rule` keeps, in their order."""
    keep = RULES[rule]
    return [p for p in paths if keep(p)]
