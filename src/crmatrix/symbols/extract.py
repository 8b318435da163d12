"""Symbols from source files: each file parsed with its language's grammar, its definitions
found by the language's rules (`definitions`), each with its location, a one-line signature,
its leading documentation (`docs`) and the exact source text of the definition; where those
docs lie, for the docs-withheld view of a corpus; and a documents corpus's files, one symbol each."""

from __future__ import annotations

import pathlib
from collections.abc import Iterable

from crmatrix.corpora.languages import language_for
from crmatrix.progress import Progress
from crmatrix.symbols.definitions import CLASSIFIERS, Def, head_start, walk
from crmatrix.symbols.docs import leading_doc
from crmatrix.symbols.grammars import parser
from crmatrix.symbols.nodes import last_row
from crmatrix.symbols.nodes import text as node_text
from crmatrix.symbols.record import DOCUMENT_KIND, Symbol, sort_key

SIGNATURE_MAX = 300


def extract_source(source: bytes, path: str, language: str) -> list[Symbol]:
    """All symbols defined in `source`, sorted like `extract_files`."""
    tree = parser(language).parse(source)
    classify = CLASSIFIERS[language]
    lines = source.split(b"\n")
    symbols = [
        _to_symbol(d, source, lines, path, language)
        for d in walk(tree.root_node, classify)
    ]
    return sorted(symbols, key=sort_key)


def doc_ranges(source: bytes, language: str) -> list[tuple[int, int]]:
    """The byte ranges of `source` that hold a definition's leading doc (crmatrix.symbols.docs),
    sorted, for every definition `extract_source` finds."""
    tree = parser(language).parse(source)
    lines = source.split(b"\n")
    found = {r for d in walk(tree.root_node, CLASSIFIERS[language])
             for r in leading_doc(d.node, d.span, source, lines, language).ranges}
    return sorted(found)


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
    return sorted(symbols, key=sort_key)


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
    return sorted(symbols, key=sort_key)


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
