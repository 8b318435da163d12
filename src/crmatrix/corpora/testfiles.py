"""Which files of a repository are source a localization task may name as gold, and which are
tests: per language, the field's own conventions (pytest's discovery, `go test`'s, Jest's and
Mocha's, Cargo's, Maven's), so that a commit's gold is the code it changes, not its tests.

A source file is one whose extension a symbol extractor knows (crmatrix.corpora.languages). It
is a test by its language's rule, or under a directory every language's tests and fixtures
live in (`TEST_DIRS`):

| language | a test |
|---|---|
| any | a path part `test`, `tests`, `testdata`, `__tests__` or `fixtures` |
| python | `test_*.py`, `*_test.py`, `conftest.py`; a path part `testing` |
| go | `*_test.go` |
| javascript, typescript, tsx | `*.test.<ext>`, `*.spec.<ext>`; a path part `spec` |
| rust | a path part `benches` (Cargo's benchmarks; `tests/` is above) |
| java | `*Test.java`, `*Tests.java`, `*IT.java` |

Rust's unit tests live inside the file they test (`#[cfg(test)] mod tests`): such a file is
source, and a commit that changes only its tests still names it.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from crmatrix.corpora.languages import language_for

TEST_DIRS = frozenset({"test", "tests", "testdata", "__tests__", "fixtures"})
_JS = (frozenset({"spec"}), re.compile(r".+\.(test|spec)\.[^.]+"))
# language -> (its own test directories, the pattern of a test file's name)
RULES: dict[str, tuple[frozenset[str], re.Pattern]] = {
    "python": (frozenset({"testing"}), re.compile(r"test_.*\.pyi?|.*_test\.pyi?|conftest\.py")),
    "go": (frozenset(), re.compile(r".*_test\.go")),
    "javascript": _JS,
    "typescript": _JS,
    "tsx": _JS,
    "rust": (frozenset({"benches"}), re.compile(r"(?!)")),  # matches no name
    "java": (frozenset(), re.compile(r".+(Test|Tests|IT)\.java")),
}


def is_test(path: str) -> bool:
    """Whether `path` is a test (or a test's data) by the rules above."""
    p = PurePosixPath(path)
    dirs, name = set(p.parts[:-1]), p.name
    own_dirs, pattern = RULES.get(language_for(path) or "", (frozenset(), re.compile(r"(?!)")))
    return bool(dirs & (TEST_DIRS | own_dirs)) or bool(pattern.fullmatch(name))


def is_source(path: str) -> bool:
    """Whether `path` is source a task's gold may name: a language's file, not a test."""
    return language_for(path) is not None and not is_test(path)
