"""What a reference answer cites, and the one file of the tree each citation names.

Two kinds of citation, each resolved against the corpus as indexed:

- a **path** (`src/flask/json/provider.py`, `blueprints.py: line 172`, `./tests/test_cli.py`):
  a path-shaped word whose extension is that of a file in the tree. It names the file at
  that exact path, else the one file ending with `/cited`, else the one file of that
  basename.
- a **name** of code: a backticked identifier or dotted name (`` `get_option` ``,
  `` `_pytest.fixtures.FixtureDef` ``, `` `Style.update()` ``), a dotted name in the prose
  (`Flask.make_response`), or a prose word shaped like code and like no English word
  (`_get_streams`, `auto_max_age`, `SegmentPrefetch`). It names the files of the tree's
  definitions it can mean: a definition whose qualified name (`Class.method`, nested
  classes too) ends with it; a module (`_pytest.fixtures` is `src/_pytest/fixtures.py`,
  `flask.json` is `src/flask/json/__init__.py`); or a module's or package's top-level
  definition (`_pytest.fixtures.FixtureDef`, and `validate.Schema` for a class defined
  anywhere under a `validate/` package, which is how a package re-exports it).

A citation that names several files (`app.py` in flask is `src/flask/app.py` and
`src/flask/sansio/app.py`; `__init__` is defined everywhere) or none is not guessed at:
the caller drops and counts it. A name whose definitions all lie in one file (a property's
getter and setter) names that file.

A bare name counts only when it is **distinctive** (`distinctive`): shaped like code as
above (`get_option`, `_get_streams`, `SegmentPrefetch`) or capitalized as Python spells a
class (`Session`, `Flask`). A bare lowercase word (`read`, `send`, `dispatch`, `jsonify`) is
as often the language's or another library's name as the tree's — an answer's `read` is
the file object's method, and the tree's one test helper called `read` would make that
test file gold — so the caller drops it even when the tree defines it once; qualified
(`Response.read`, `flask.jsonify`) it resolves as usual.

Not names: Python's keywords and builtins written bare (`type`, `open`, `TypeError` name
the language's, not the tree's), bare dunders (`__init__` names a protocol), and a dotted
word whose first part is one letter (`e.g`, `i.e`).
"""

from __future__ import annotations

import builtins
import keyword
import re
from collections import defaultdict
from pathlib import PurePosixPath

from crmatrix.corpora.languages import language_for
from crmatrix.datasets.tasks import Task
from crmatrix.symbols import Symbol

_PATH = re.compile(
    r"(?<![\w/.-])(?P<path>(?:\.{1,2}/)?(?:[\w.-]+/)*[\w-][\w.-]*\.(?P<ext>[A-Za-z0-9]{1,8}))(?![\w/-])"
    r"(?::\s*lines?\s+(?P<start>\d+)(?:\s*[-–]\s*(?P<end>\d+))?)?"
)
_SPAN = re.compile(r"`([^`\n]+)`")
# A backticked span that is a name: `name`, `a.b.c`, `@decorator`, `call(args)`.
_SPAN_NAME = re.compile(r"@?(?P<name>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\s*(?:\(.*\))?")
# A word of the prose, dotted or not, not part of a path, a span or a longer word.
_WORD = re.compile(r"(?<![\w./`@-])[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*(?![\w/`-])")
# snake_case, SCREAMING_CASE, _private, camelCase, CamelCase: no English word is written so.
_CODE_SHAPED = re.compile(r"[A-Za-z0-9]_[A-Za-z0-9]|^_+[A-Za-z]|[a-z0-9][A-Z]")
_NOT_NAMES = frozenset(dir(builtins)) | frozenset(keyword.kwlist)


def paths(text: str, extensions: set[str]) -> list[dict]:
    """Path-shaped words of `text` with a known extension, first appearance first, each once;
    `lines` when written `path: line N-M`."""
    out: dict[str, dict] = {}
    for m in _PATH.finditer(text):
        if m["ext"].lower() not in extensions:
            continue
        cited = m["path"].rstrip(".")
        lines = [int(m["start"]), int(m["end"] or m["start"])] if m["start"] else None
        entry = out.setdefault(cited, {"cited": cited, "lines": None})
        entry["lines"] = entry["lines"] or lines
    return list(out.values())


def resolve_path(cited: str, files: list[str]) -> tuple[str | None, list[str]]:
    """The one file `cited` names (exact path, unique suffix, unique basename) and, when it
    names none or several, the candidates (empty: absent)."""
    rel = re.sub(r"^(\.{1,2}/)+", "", cited)
    if rel in files:
        return rel, [rel]
    by_suffix = [p for p in files if p.endswith("/" + rel)]
    if by_suffix:
        return (by_suffix[0] if len(by_suffix) == 1 else None), by_suffix
    base = PurePosixPath(rel).name
    by_name = [p for p in files if PurePosixPath(p).name == base]
    return (by_name[0] if len(by_name) == 1 else None), by_name


def names(text: str, extensions: set[str]) -> list[str]:
    """The code names `text` cites, first appearance first, each once: backticked spans, then
    the prose's dotted and code-shaped words."""
    found = [m["name"] for s in _SPAN.finditer(text) if (m := _SPAN_NAME.fullmatch(s[1].strip()))]
    for m in _WORD.finditer(text):
        word = m[0]
        if "." in word:
            if len(word.split(".", 1)[0]) > 1:
                found.append(word)
        elif _CODE_SHAPED.search(word):
            found.append(word)
    return [n for n in dict.fromkeys(found) if _is_name(n, extensions)]


def distinctive(name: str) -> bool:
    """A name trusted to mean the tree's definition: qualified (dotted), shaped like code, or
    capitalized; not a bare lowercase word (see the module's docstring)."""
    return "." in name or bool(_CODE_SHAPED.search(name)) or name[:1].isupper()


def gold_by_name_alone(tasks: list[Task]) -> dict:
    """Of the gold files of `tasks` (file sets with their citations), how many no path cites:
    a name alone made them gold."""
    total = named = 0
    for t in tasks:
        by_path = {c["file"] for c in t.gold["citations"] if "cited" in c}
        total += len(t.gold["file_set"])
        named += sum(f not in by_path for f in t.gold["file_set"])
    return {"files": total, "by_name_alone": named}


def _is_name(name: str, extensions: set[str]) -> bool:
    if "." in name:  # `provider.py` is a path citation, not module `provider`'s attribute `py`
        return name.rsplit(".", 1)[1].lower() not in extensions
    return name not in _NOT_NAMES and not (name.startswith("__") and name.endswith("__"))


def _module(path: str) -> tuple[str, ...]:
    """A file's dotted module path: `src/flask/json/__init__.py` is src.flask.json."""
    parts = PurePosixPath(path).with_suffix("").parts
    return parts[:-1] if parts[-1] == "__init__" else parts


class Definitions:
    """The tree's definitions by qualified name, its modules (source files) and packages by
    dotted path."""

    def __init__(self, symbols: list[Symbol], files: list[str]):
        self._defs: dict[str, list[tuple[str, tuple[str, ...]]]] = defaultdict(list)  # last name -> (file, qualname)
        by_file: dict[str, list[Symbol]] = defaultdict(list)
        for s in symbols:
            by_file[s.path].append(s)
        for path, syms in by_file.items():
            for qualname in _qualnames(syms):
                self._defs[qualname[-1]].append((path, qualname))
        self._modules: dict[tuple[str, ...], set[str]] = defaultdict(set)  # every dotted suffix of a module
        self._packages: dict[tuple[str, ...], set[str]] = defaultdict(set)  # every dotted run of a file's dirs
        for path in filter(language_for, files):  # a module is source: `register.html` is not `register`
            module = _module(path)
            for i in range(len(module)):
                self._modules[module[i:]].add(path)
            folders = PurePosixPath(path).parts[:-1]
            for j in range(1, len(folders) + 1):
                for i in range(j):
                    self._packages[folders[i:j]].add(path)

    def resolve(self, name: str) -> tuple[str | None, list[str]]:
        """The one file `name` names and, when it names none or several, the candidates."""
        parts = tuple(name.split("."))
        defs = self._defs.get(parts[-1], [])
        found = {path for path, qualname in defs if qualname[-len(parts):] == parts}
        for k in range(1, len(parts) + 1):
            module, rest = parts[:k], parts[k:]
            if not rest:
                found |= self._modules.get(module, set())
                continue
            within = self._modules.get(module, set()) | self._packages.get(module, set())
            found |= {path for path, qualname in defs if qualname == rest and path in within}
        candidates = sorted(found)
        return (candidates[0] if len(candidates) == 1 else None), candidates


def _qualnames(symbols: list[Symbol]) -> list[tuple[str, ...]]:
    """Each definition's qualified name in its file (`Outer.Inner.method`): a symbol knows its
    innermost parent's name only, so the chain comes from the definitions enclosing it."""
    out, open_ = [], []  # open_: (symbol, qualname) of the definitions enclosing the current line
    for s in sorted(symbols, key=lambda s: (s.start_line, -s.end_line, s.name)):
        while open_ and open_[-1][0].end_line < s.start_line:
            open_.pop()
        qualname = (s.parent, s.name) if s.parent else (s.name,)
        for enclosing, chain in reversed(open_):
            if enclosing.name == s.parent:
                qualname = (*chain, s.name)
                break
        open_.append((s, qualname))
        out.append(qualname)
    return out
