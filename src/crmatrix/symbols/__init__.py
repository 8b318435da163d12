"""Tree-sitter extraction of code symbols (definitions) from source files.

Supports Python, Rust, TypeScript, TSX, JavaScript, Go and Java.  Each symbol
carries its location, a one-line signature, its leading documentation and the
exact source text of the definition, so later pipeline stages can index and
match symbols without re-parsing.
"""

from __future__ import annotations

import pathlib
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, fields
from typing import Any

import tree_sitter_go
import tree_sitter_java
import tree_sitter_javascript
import tree_sitter_python
import tree_sitter_rust
import tree_sitter_typescript
from tree_sitter import Language, Parser

from crmatrix.atomic import hash_obj, read_jsonl
from crmatrix.corpora.languages import language_for
from crmatrix.progress import Progress
from crmatrix.symbols.definitions import CLASSIFIERS, Def, head_start, walk
from crmatrix.symbols.docs import leading_doc
from crmatrix.symbols.nodes import last_row
from crmatrix.symbols.nodes import text as node_text

_GRAMMARS: dict[str, Callable[[], Any]] = {
    "python": tree_sitter_python.language,
    "rust": tree_sitter_rust.language,
    "typescript": tree_sitter_typescript.language_typescript,
    "tsx": tree_sitter_typescript.language_tsx,
    "javascript": tree_sitter_javascript.language,
    "go": tree_sitter_go.language,
    "java": tree_sitter_java.language,
}

_PARSERS: dict[str, Parser] = {}

SIGNATURE_MAX = 300


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


def extract_source(source: bytes, path: str, language: str) -> list[Symbol]:
    """All symbols defined in `source`, sorted like `extract_files`."""
    tree = parser(language).parse(source)
    classify = CLASSIFIERS[language]
    lines = source.split(b"\n")
    symbols = [
        _to_symbol(d, source, lines, path, language)
        for d in walk(tree.root_node, classify)
    ]
    return sorted(symbols, key=_sort_key)


def doc_ranges(source: bytes, language: str) -> list[tuple[int, int]]:
    """The byte ranges of `source` that hold a definition's leading doc (crmatrix.symbols.docs),
    sorted, for every definition `extract_source` finds."""
    tree = parser(language).parse(source)
    lines = source.split(b"\n")
    found = {r for d in walk(tree.root_node, CLASSIFIERS[language])
             for r in leading_doc(d.node, d.span, source, lines, language).ranges}
    return sorted(found)


def read_symbols(path: pathlib.Path) -> list[Symbol]:
    """The symbols a symbols stage wrote (JSONL, one symbol a line)."""
    return [Symbol.from_dict(d) for d in read_jsonl(path)]


def symbols_hash(symbols: list[Symbol]) -> str:
    """Names one symbol list, so what is built from it (an index, a graph) can check it still fits."""
    return hash_obj([[s.path, s.start_line, s.name] for s in symbols])


def extract_files(root: pathlib.Path, paths: Iterable[str]) -> list[Symbol]:
    """Symbols of every supported file among `paths` (relative to `root`)."""
    symbols: list[Symbol] = []
    paths = list(paths)
    with Progress("parsing", len(paths), "files") as progress:
        for path in paths:
            progress.advance()
            language = language_for(path)
            full = root / path
            # Corpora can list submodules or dangling symlinks; they have no source.
            if language is None or not full.is_file():
                continue
            symbols.extend(extract_source(full.read_bytes(), path, language))
    return sorted(symbols, key=_sort_key)


DOCUMENT_KIND = "doc"


def extract_documents(root: pathlib.Path, paths: Iterable[str]) -> list[Symbol]:
    """One symbol per file of a documents corpus (a docs datastore): named by the file's
    stem (the document's id), its first line as signature, its text as doc and body."""
    symbols = []
    for path in paths:
        text = (root / path).read_text(encoding="utf-8")
        stem = pathlib.PurePosixPath(path).stem
        symbols.append(Symbol(name=stem, kind=DOCUMENT_KIND, parent=stem.split(".", 1)[0], path=path,
                              language="text", start_line=1, end_line=max(1, len(text.splitlines())),
                              signature=" ".join(text.split("\n", 1)[0].split())[:SIGNATURE_MAX], doc=text, body=text))
    return sorted(symbols, key=_sort_key)


def _sort_key(s: Symbol) -> tuple[str, int, int, str, str]:
    return (s.path, s.start_line, s.end_line, s.name, s.kind)


def parser(language: str) -> Parser:
    """The tree-sitter parser of one supported language (made once per process)."""
    parser = _PARSERS.get(language)
    if parser is None:
        if language not in _GRAMMARS:
            raise ValueError(f"unsupported language: {language!r}")
        parser = Parser(Language(_GRAMMARS[language]()))
        _PARSERS[language] = parser
    return parser


def _to_symbol(d: Def, source: bytes, lines: list[bytes], path: str, language: str) -> Symbol:
    span = d.span
    head = source[head_start(span) : d.head_end]
    return Symbol(
        name=d.name,
        kind=d.kind,
        parent=d.parent,
        path=path,
        language=language,
        start_line=span.start_point.row + 1,
        end_line=last_row(span) + 1,
        signature=" ".join(node_text(head).split())[:SIGNATURE_MAX],
        doc=leading_doc(d.node, span, source, lines, language).text,
        body=node_text(source[span.start_byte : span.end_byte]),
    )
