"""From an external system's raw answer to ranked hits.

Four steps, each configurable: a parser turns the text into a JSON value (`json`;
`path-line` for grep-style `path:line:text` lines; `regex`, one record per match of the
option `pattern`, its named groups being the fields, for tools that answer in Markdown or
prose); a path selects the hit list in it
(`data.symbols[]`: key `data`, key `symbols`, each item; `[]` may stand at any step, and
nested lists flatten); a field mapping names, per hit, where our fields are (`{symbol:
name, path: file, start_line: line}`, dotted for nested keys, `.` for the item itself);
and each hit is resolved against the corpus's symbols, so a tool that answers with a file
and a line is scored on the symbol defined there, and one that answers with a name gets
that symbol's lines.

Order: when every hit has a score, hits are sorted by `crmatrix.hits.sort_key`
(-score, path, start_line, symbol); a system that gives only ranks keeps its own order,
with score 1/rank. A symbol listed twice counts once, at its first (best) place.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from crmatrix.hits import Hit, sort_key
from crmatrix.symbols import Symbol
from crmatrix.systems.answers import QueryFailure

FIELDS = ("path", "symbol", "kind", "start_line", "end_line", "score")
DEFAULT_FIELDS = {f: f for f in FIELDS}
_QUALIFIER = re.compile(r"\.|::|#")  # Class.method, Type::method, Class#method
_PATH_LINE = re.compile(r"^(?P<path>[^:\n]+):(?P<line>\d+)(?::|$)")


def parse_path_lines(text: str) -> list[dict]:
    """`path:line[:anything]` lines (grep -n, ripgrep --vimgrep); other lines are ignored."""
    return [{"path": m["path"].strip(), "start_line": int(m["line"])}
            for m in map(_PATH_LINE.match, text.splitlines()) if m]


PARSERS: dict[str, Callable[[str], Any]] = {"json": json.loads, "path-line": parse_path_lines}
REGEX = "regex"


def check_pattern(pattern: str | None) -> str | None:
    """Why `pattern` cannot serve the regex parser, or None."""
    if pattern is None:
        return "expected a regular expression for parser: regex, with a (?P<path>...) group"
    try:
        groups = re.compile(pattern).groupindex
    except re.error as e:
        return f"not a regular expression: {e}"
    unknown = sorted(set(groups) - set(FIELDS))
    if unknown or "path" not in groups:
        return (f"named groups must include path and be among {', '.join(FIELDS)}"
                f"{' (unknown: ' + ', '.join(unknown) + ')' if unknown else ''}")
    return None


def parse(text: str, parser: str, pattern: str | None = None) -> Any:
    if not text.strip():
        raise QueryFailure("empty", "no answer (blank output)")
    if parser == REGEX:  # every match is one hit, in the order of the text
        return [m.groupdict() for m in re.finditer(pattern, text, re.M)]
    try:
        return PARSERS[parser](text)
    except ValueError as e:
        start = text.strip()[:120]
        raise QueryFailure("bad-output", f"not {parser}: {e}; the answer starts {start!r}") from None


def _shape(value: Any) -> str:
    return f"an object with keys {', '.join(map(repr, sorted(value)))}" if isinstance(value, dict) \
        else f"a {type(value).__name__}"


def get(record: Any, key: str) -> Any:
    """A dotted key in a record; `.` is the record itself; a missing key is None."""
    if key == ".":
        return record
    for part in key.split("."):
        if not isinstance(record, dict) or part not in record:
            return None
        record = record[part]
    return record


def select(value: Any, path: str) -> list:
    """The items the hit path points at; a path not found in the answer is bad output."""
    steps = [s for s in path.split(".") if s]
    items = [value]
    for step in steps:
        each, key = step.endswith("[]"), step.removesuffix("[]")
        found = []
        for item in items:
            if key:
                if not isinstance(item, dict) or key not in item:
                    raise QueryFailure("bad-output", f"hit path {path!r}: no key {key!r} in {_shape(item)}")
                item = item[key]
            if each:
                if not isinstance(item, list):
                    raise QueryFailure("bad-output", f"hit path {path!r}: {key or 'the answer'} is {_shape(item)}, "
                                                     "expected a list")
                found.extend(item)
            else:
                found.append(item)
        items = found
    if not steps or not steps[-1].endswith("[]"):  # a path ending at the list itself
        if not isinstance(items[0], list):
            raise QueryFailure("bad-output", f"hit path {path!r}: points at {_shape(items[0])}, expected a list")
        items = [x for it in items for x in it]
    return items


class SymbolTable:
    """The corpus's symbols by path, for resolving a (path, name, line) a tool answered with;
    an absolute path under the corpus, or under another directory holding it (`also`: the
    mirror a tool was given, crmatrix.systems.isolation), is taken relative to it."""

    def __init__(self, symbols: list[Symbol], corpus_dir: Path, *also: Path):
        self.by_path: dict[str, list[Symbol]] = {}
        for s in sorted(symbols, key=lambda s: (s.path, s.start_line, s.end_line, s.name)):
            self.by_path.setdefault(s.path, []).append(s)
        dirs = [Path(d) for d in (corpus_dir, *also)]
        self.roots = sorted({str(r) for d in dirs for r in (d, d.resolve())}, key=len, reverse=True)

    def relative(self, path: str) -> str:
        p = path.replace("\\", "/")
        if os.path.isabs(p):
            for root in self.roots:
                if p.startswith(root.rstrip("/") + "/"):
                    return p[len(root.rstrip("/")) + 1:]
        while p.startswith("./"):
            p = p[2:]
        return p

    def resolve(self, path: str, name: str | None, line: int | None) -> Symbol | None:
        """A named hit: the symbol of that name (as answered, then unqualified: `Pin.from_config`
        is `from_config`) at the line, else the nearest one of that name. A hit with only a
        line, or a name the file does not define: the innermost symbol at the line."""
        in_file = self.by_path.get(path, [])
        for wanted in dict.fromkeys([name, _QUALIFIER.split(name)[-1]] if name else []):
            named = [s for s in in_file if s.name == wanted]
            if named:
                if line is None:
                    return named[0]
                return self._at(named, line) or min(named, key=lambda s: (abs(s.start_line - line), s.start_line))
        return self._at(in_file, line) if line is not None else None

    @staticmethod
    def _at(symbols: list[Symbol], line: int) -> Symbol | None:
        around = [s for s in symbols if s.start_line <= line <= s.end_line]
        return min(around, key=lambda s: (s.end_line - s.start_line, s.start_line), default=None)


def _int(value: Any, what: str, i: int) -> int | None:
    if value is None:
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        raise QueryFailure("bad-output", f"hit {i}: {what} {value!r} is not a line number") from None


PATHLESS = ("fail", "rank")  # a hit without a path: the answer is bad output, or the hit costs its rank


def resolve_hits(records: list, fields: dict[str, str], table: SymbolTable, k: int,
                 pathless: str = "fail") -> list[tuple[Hit, Hit]]:
    """The ranked hits (`to_hits`), each paired with the hit as the tool answered it, before it
    was resolved against the corpus (its path made relative, its score as ranked): what
    `crmatrix try` shows beside what it resolved to."""
    fields = {**DEFAULT_FIELDS, **fields}
    pairs, scores = [], []
    for i, rec in enumerate(records):
        path = get(rec, fields["path"])
        if (not isinstance(path, str) or not path) and pathless != "rank":
            raise QueryFailure("bad-output", f"hit {i}: no path at {fields['path']!r} in {_shape(rec)}")
        path = table.relative(path) if isinstance(path, str) and path else ""
        name = get(rec, fields["symbol"])
        name = name if isinstance(name, str) and name else None
        line = _int(get(rec, fields["start_line"]), fields["start_line"], i)
        end = _int(get(rec, fields["end_line"]), fields["end_line"], i)
        score = get(rec, fields["score"])
        scores.append(float(score) if isinstance(score, (int, float)) and not isinstance(score, bool) else None)
        kind = get(rec, fields["kind"])
        answered = Hit(path, name or "", kind if isinstance(kind, str) else "", line or 0, end or line or 0, 0.0)
        sym = table.resolve(path, name, line)
        # not a symbol of the corpus as indexed: kept as answered (it still costs a rank)
        resolved = answered if sym is None else Hit(path, sym.name, sym.kind, sym.start_line, sym.end_line, 0.0)
        pairs.append((answered, resolved))
    if pairs and all(s is not None for s in scores):
        pairs = sorted(((replace(a, score=s), replace(h, score=s)) for (a, h), s in zip(pairs, scores, strict=True)),
                       key=lambda pair: sort_key(pair[1]))
    else:  # ranks only: the system's order, score 1/rank
        pairs = [(replace(a, score=1.0 / r), replace(h, score=1.0 / r)) for r, (a, h) in enumerate(pairs, 1)]
    seen, out = set(), []
    for a, h in pairs:
        key = (h.path, h.start_line, h.symbol)
        if key not in seen or not h.path:  # each pathless hit is an answer of its own
            seen.add(key)
            out.append((a, h))
    return out[:k]


def to_hits(records: list, fields: dict[str, str], table: SymbolTable, k: int, pathless: str = "fail") -> list[Hit]:
    """`pathless`: what a hit without a path means (PATHLESS): a tool whose contract lets a row
    have none (a chunk located nowhere in the files) says `rank`, and the row is kept in its
    rank, naming nothing of the corpus."""
    return [h for _, h in resolve_hits(records, fields, table, k, pathless)]
