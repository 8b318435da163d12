"""Whether two pieces of code are the same function: equal syntax trees up to whitespace,
comments and decorators (RepoQA's needle against what a system retrieved).

A line range of a file is reduced to its syntax leaves in order, each with its node type
and its parent's, leaving out comments, decorators / annotations / attributes and the
`export` wrapper of a declaration: layout, a reworded comment or an added `@cache` change
nothing, while a renamed variable or a changed literal does. The file is parsed whole (a
method's lines alone do not parse in most grammars), with the grammar of its language.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the parsers load with the loader's work, not with the format registry
    from tree_sitter import Node

from crmatrix.corpora.languages import language_for
from crmatrix.symbols.grammars import parser

# Subtrees that are not part of what a function does.
_SKIPPED = frozenset({"comment", "line_comment", "block_comment", "decorator", "marker_annotation", "annotation",
                      "attribute_item", "inner_attribute_item"})
_WRAPPERS = frozenset({"export_statement"})  # their own keywords (`export`, `default`) are skipped

Fingerprint = tuple[tuple[str, str, str], ...]


def leaves(root: Node, first_row: int, last_row: int) -> Fingerprint:
    """The leaves starting in rows first_row..last_row (0-based, inclusive), in source order."""
    out = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type in _SKIPPED or node.start_point.row > last_row or node.end_point.row < first_row:
            continue
        if node.child_count == 0:
            parent = node.parent.type if node.parent is not None else ""
            if node.start_point.row >= first_row and not (parent in _WRAPPERS and not node.is_named):
                out.append((parent, node.type, node.text.decode("utf-8", errors="replace")))
            continue
        stack.extend(reversed(node.children))
    return tuple(out)


class Fingerprinter:
    """Fingerprints of line ranges of a tree's files, each file parsed once."""

    def __init__(self, read):
        """`read(path) -> bytes` gives a file's source."""
        self._read = read
        self._trees: dict[str, Node | None] = {}

    def _root(self, path: str) -> Node | None:
        if path not in self._trees:
            language = language_for(path)
            self._trees[path] = parser(language).parse(self._read(path)).root_node if language else None
        return self._trees[path]

    def of(self, path: str, start_line: int, end_line: int) -> Fingerprint | None:
        """Lines start_line..end_line (1-based, inclusive); None for a file in no supported language."""
        root = self._root(path)
        return None if root is None else leaves(root, start_line - 1, end_line - 1)
