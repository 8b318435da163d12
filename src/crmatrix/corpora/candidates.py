"""Which of a repository's files a swe-bench or history dataset ranks: the candidate set, by a
rule the field states (docs/public-benchmarks.md names each one's source). The corpus's globs choose the
source files first (`**/*.py`); a rule then leaves test code out, as each paper does:

- `all`: every file the globs choose (tests included).
- `agentless`: Agentless's rule (its repository structure filtered by `filter_out_test_files`):
  no file or directory whose name starts with `test`. The field's practice, and the default.
- `swerank`: SweRank's literal rule (`find_py_or_non_dict_with_path` of its
  src/get_repo_structure/get_patch_info.py): no path holding `test` anywhere, in any case; in
  pytest-dev/pytest, whose package `_pytest` holds it, no file name holding it (SweRank's
  exception for that repository). It leaves out source files too (`src/_pytest/unittest.py`,
  `sympy/utilities/randtest.py`, `conftest.py`).
- `locagent`: LocAgent's BM25 retriever's excludes: `**/test/**`, `**/tests/**`,
  `**/test_*.py`, `**/*_test.py`.
- `language`: crmatrix's own, per language (crmatrix.corpora.testfiles: pytest's, `go test`'s,
  Jest's, Cargo's, Maven's conventions): no test. A history dataset's gold is drawn from
  exactly these files, so it is that format's default.

A repository's store holds one candidate set: its datasets that name the format's default rule
share the store named as the repository is (`repositories:` key), and each other rule gets a store
of its own, `REPOSITORY@RULE` (`store`), so one config ranks a repository under two rules (the
field's and `all`, for comparison) and adding one renames no store.

Each rule is a plain function of the path (case as written: `Tests/` is kept by all of them but
SweRank's, which lowercases), and SweRank's of the repository too (`keeper`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial

from crmatrix import CrmatrixError
from crmatrix.corpora.testfiles import is_test

ALL, AGENTLESS, SWERANK, LOCAGENT, LANGUAGE = "all", "agentless", "swerank", "locagent", "language"
DEFAULT = AGENTLESS  # what the field does: Agentless, and the work that follows it


def _agentless(path: str) -> bool:
    return not any(part.startswith("test") for part in path.split("/"))


# SweRank's exception: the repositories whose files it tests by their names alone
SWERANK_BY_NAME = frozenset({"pytest-dev/pytest"})


def _swerank(path: str, repository: str | None = None) -> bool:
    lowered = path.lower()
    return "test" not in lowered.rpartition("/")[2] and ("test" not in lowered or repository in SWERANK_BY_NAME)


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


# between a repository's name and a rule in the name of its store: no `repositories:` key holds it
STORE_SEP = "@"


def store(repository: str, rule: str, default: str) -> str:
    """The store of `repository`'s (a `repositories:` key) files under `rule`, `default` the rule of
    the dataset format's when it names none."""
    return repository if rule == default else f"{repository}{STORE_SEP}{rule}"


def repository_of(store_name: str) -> str:
    """The `repositories:` key whose store `store_name` is."""
    return store_name.partition(STORE_SEP)[0]


def keeper(rule: str, repository: str | None = None) -> Callable[[str], bool]:
    """`rule`'s test of a path of `repository` (`owner/name` as SWE-bench spells it; None: any)."""
    return partial(_swerank, repository=repository) if rule == SWERANK else RULES[rule]


def candidate(rule: str, path: str, repository: str | None = None) -> bool:
    """Whether `rule` keeps `path` (a repository-relative path, `/`-separated) of `repository`."""
    return keeper(rule, repository)(path)


def select(rule: str, paths: Iterable[str], repository: str | None = None) -> list[str]:
    """The paths `rule` keeps, in their order."""
    keep = keeper(rule, repository)
    return [p for p in paths if keep(p)]
