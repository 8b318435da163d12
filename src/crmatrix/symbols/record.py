"""The symbol record: one definition found in a source file (or one document of a docs
corpus), as the symbols stage writes it and every later stage reads it."""

from __future__ import annotations

import pathlib
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any

from crmatrix.atomic import hash_obj, read_jsonl

# The kind of the one symbol a documents corpus (a docs datastore) has per file.
DOCUMENT_KIND = "doc"


@dataclass(frozen=True)
class Symbol:
    """One definition found in a source file."""

    name: str
    kind: str
    parent: str
    path: str
    language: str
    start_line: int
    end_line: int
    signature: str
    doc: str
    body: str

    @property
    def qualname(self) -> str:
        return f"{self.parent}.{self.name}" if self.parent else self.name

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Symbol:
        # Ignore extra keys (e.g. a stored qualname) so records can carry more.
        return cls(**{f.name: d[f.name] for f in fields(cls)})


def sort_key(s: Symbol) -> tuple[str, int, int, str, str]:
    """The order of every symbol list the stage writes: by file, then position."""
    return (s.path, s.start_line, s.end_line, s.name, s.kind)


def paths(symbols: Sequence[Symbol]) -> list[str]:
    """Each symbol's path, in order; a sequence that holds them apart (its `paths()`: a commit of
    a symbol store, `crmatrix.versions.store.CommitSymbols`) gives them without making its symbols."""
    own = getattr(symbols, "paths", None)
    return own() if own is not None else [s.path for s in symbols]


def read_symbols(path: pathlib.Path) -> list[Symbol]:
    """The symbols a symbols stage wrote (JSONL, one symbol a line)."""
    return [Symbol.from_dict(d) for d in read_jsonl(path)]


def symbols_hash(symbols: list[Symbol]) -> str:
    """Names one symbol list, so what is built from it (an index, a graph) can check it still fits."""
    return hash_obj([[s.path, s.start_line, s.name] for s in symbols])
