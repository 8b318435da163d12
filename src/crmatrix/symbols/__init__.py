"""Code symbols (definitions) and their extraction from source files by tree-sitter.

Supports Python, Rust, TypeScript, TSX, JavaScript, Go and Java. Each symbol carries its
location, a one-line signature, its leading documentation and the exact source text of the
definition, so later pipeline stages can index and match symbols without re-parsing.

The package is one module per part: `record` (the Symbol every stage reads, and its file),
`grammars` (the parser of each language), `nodes` (reading a node), `definitions` (which
nodes are definitions, per language), `docs` (their leading documentation and where it lies)
and `extract` (files and documents to symbols). Only the record is imported here: a stage
that reads symbols runs no parser, so an edit to the extraction re-runs the symbols stage
alone (`crmatrix.codehash`), what follows it only when the symbols it writes change.
"""

from crmatrix.symbols.record import DOCUMENT_KIND, Symbol, paths, read_symbols, symbols_hash

__all__ = ["DOCUMENT_KIND", "Symbol", "paths", "read_symbols", "symbols_hash"]
