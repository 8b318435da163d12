"""The reference graph of one corpus: which symbol calls, extends or overrides which, and
which file imports which. `crmatrix.graph.extract` builds it from the source with
tree-sitter; this module is the stored form and what is read from it, so a job that only
reads a graph does not depend on the extraction code.

`results/graph/{corpus}.json`:

    {"symbols": 412, "symbols_hash": "...",          # the symbol list it was built from
     "calls":     [[caller, callee], ...],           # symbols by docid, path:start_line:name
     "inherits":  [[class, base], ...],              # a class, struct or trait and its base / trait
     "overrides": [[method, base_method], ...],
     "imports":   [[file, file], ...],               # corpus paths
     "counts":    {"calls": {"found", "qualified", "same_file", "unique", "ambiguous", "unresolved"},
                   "inherits": {...the same...}, "overrides": n, "imports": {"found", "resolved", "unresolved"}}}

Edge lists are sorted and free of duplicates, so one corpus always gives the same bytes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from crmatrix import CrmatrixError, atomic
from crmatrix.hits import Hit, docid
from crmatrix.symbols import Symbol, symbols_hash

SYMBOL_EDGES = ("calls", "inherits", "overrides")  # the edges between symbols; imports join files


def symbol_id(s: Symbol) -> str:
    return docid(Hit(s.path, s.name, s.kind, s.start_line, s.end_line, 0.0))


@dataclass
class Graph:
    symbols: int
    symbols_hash: str
    calls: list[list[str]] = field(default_factory=list)
    inherits: list[list[str]] = field(default_factory=list)
    overrides: list[list[str]] = field(default_factory=list)
    imports: list[list[str]] = field(default_factory=list)
    counts: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"symbols": self.symbols, "symbols_hash": self.symbols_hash, "calls": self.calls,
                "inherits": self.inherits, "overrides": self.overrides, "imports": self.imports,
                "counts": self.counts}

    def call_edges(self, direction: str, name: str, file_suffix: str | None = None) -> list[tuple[str, str]]:
        """(name, path) of the callees ("callees") or callers ("callers") of every symbol named
        `name` in a file ending with `file_suffix` (anywhere when None), sorted."""
        out = set()
        for caller, callee in self.calls:
            me, other = (caller, callee) if direction == "callees" else (callee, caller)
            path, _, symbol = me.rsplit(":", 2)
            if symbol == name and (file_suffix is None or path.endswith(file_suffix)):
                other_path, _, other_symbol = other.rsplit(":", 2)
                out.add((other_symbol, other_path))
        return sorted(out)

    def neighbours(self, symbols: list[Symbol]) -> list[np.ndarray]:
        """For each symbol (by index), its one-hop neighbours over calls, inheritance and
        overrides in either direction, as sorted indices."""
        index = {symbol_id(s): i for i, s in enumerate(symbols)}
        adjacent: list[set[int]] = [set() for _ in symbols]
        for kind in SYMBOL_EDGES:
            for a, b in getattr(self, kind):
                i, j = index[a], index[b]
                if i != j:
                    adjacent[i].add(j)
                    adjacent[j].add(i)
        return [np.array(sorted(n), dtype=np.int64) for n in adjacent]


def read(path: Path, symbols: list[Symbol] | None = None) -> Graph:
    """The graph stored at `path`; given `symbols`, checked to have been built from them."""
    path = Path(path)
    if not path.is_file():
        raise CrmatrixError(f"{path}: no graph there (the extract_graph stage writes it)")
    d = atomic.read_json(path)
    try:
        graph = Graph(**d)
    except TypeError:
        raise CrmatrixError(f"{path}: not a graph file (keys: {', '.join(sorted(d))}); "
                            "delete it and run again") from None
    if symbols is not None and graph.symbols_hash != symbols_hash(symbols):
        raise CrmatrixError(f"{path}: built from other symbols than the ones given; rebuild it")
    return graph


def write(graph: Graph, path: Path) -> None:
    atomic.write_json(Path(path), graph.to_dict())
