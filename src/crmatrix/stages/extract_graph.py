"""extract_graph: a corpus's reference graph (calls, inheritance, overrides, imports) as JSON beside its symbols."""

from __future__ import annotations

from pathlib import Path

from crmatrix import atomic, graph
from crmatrix.graph.extract import build
from crmatrix.symbols import read_symbols


def run(tree: Path, manifest: Path, symbols: Path, out: Path) -> graph.Graph:
    files = [f["path"] for f in atomic.read_json(manifest)["files"]]
    g = build(Path(tree), files, read_symbols(symbols))
    graph.write(g, Path(out))
    return g
