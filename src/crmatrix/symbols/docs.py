"""A definition's leading documentation: its text, and where in the file it lies.

Python: the docstring, else the `#` lines right above (decorators included in the
definition); every other language: the comments right above (`///`, `/** */`, `//`, `#`),
markers stripped. The places serve the docs-withheld view of a corpus
(crmatrix.corpora.views), which blanks them: the text a derived query is made of
(crmatrix.datasets.derived) must then be nowhere in what a system searches, so a place is
every leading doc the definition has (a Python docstring *and* the comments above it),
found the way the text is found.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass

from tree_sitter import Node

from crmatrix.symbols.nodes import last_row
from crmatrix.symbols.nodes import text as _text

_COMMENT_TYPES = frozenset({"comment", "line_comment", "block_comment"})
# Attributes and decorators sit between a definition and its doc comment.
_DOC_TRANSPARENT = frozenset({"attribute_item", "decorator"})


@dataclass(frozen=True)
class LeadingDoc:
    text: str
    ranges: tuple[tuple[int, int], ...]  # byte ranges of the file that hold the definition's leading docs


def leading_doc(node: Node, span: Node, source: bytes, lines: list[bytes], language: str) -> LeadingDoc:
    """`node`: the definition; `span`: it with its wrappers (decorators, `export`, ...)."""
    if language == "python":
        return _python_doc(node, span, source, lines)
    comments = _leading_comments(span, language)
    text = "\n".join(_clean_comment(_text(c.text)) for c in comments).strip()
    return LeadingDoc(text, tuple((c.start_byte, c.end_byte) for c in comments))


def _leading_comments(span: Node, language: str) -> list[Node]:
    """Adjacent comments right above a definition, in source order."""
    # JSDoc in CommonJS libraries (express) is often followed by one blank
    # line; elsewhere a blank line separates unrelated comments (Go banners).
    first_gap = 2 if language in ("javascript", "typescript", "tsx") else 1
    comments: list[Node] = []
    row = span.start_point.row
    sibling = span.prev_sibling
    while sibling is not None and (sibling.type in _COMMENT_TYPES or sibling.type in _DOC_TRANSPARENT):
        max_gap = 1 if comments else first_gap
        if last_row(sibling) < row - max_gap or _trails_code(sibling):
            break
        if sibling.type in _COMMENT_TYPES:
            comments.append(sibling)
        row = sibling.start_point.row
        sibling = sibling.prev_sibling
    return comments[::-1]


def _trails_code(comment: Node) -> bool:
    # `x = 1; // note` documents the line it ends, not the next definition.
    before = comment.prev_sibling
    return before is not None and last_row(before) == comment.start_point.row


def _clean_comment(text: str) -> str:
    text = text.strip()
    if text.startswith("/*"):
        inner = text[2:].removesuffix("*/")
        inner = inner[1:] if inner[:1] in ("*", "!") else inner
        lines = [line.strip().removeprefix("*").strip() for line in inner.splitlines()]
    else:
        lines = [_strip_line_marker(line.strip()) for line in text.splitlines()]
    return "\n".join(lines).strip()


def _strip_line_marker(line: str) -> str:
    for marker in ("///", "//!", "//"):
        if line.startswith(marker):
            return line[len(marker) :].strip()
    return line


def _python_doc(node: Node, span: Node, source: bytes, lines: list[bytes]) -> LeadingDoc:
    docstring = _docstring_range(node)
    rows = _hash_rows(lines, span.start_point.row)
    # an empty docstring (or one the docs-withheld view blanked) leaves the comments above
    text = inspect.cleandoc(_text(source[docstring[0] : docstring[1]])).strip() if docstring else ""
    text = text or "\n".join(_text(lines[r].strip()[1:]).removeprefix(" ").rstrip() for r in rows)
    ranges = [_comment_range(span, lines, r) for r in rows]
    return LeadingDoc(text, tuple(sorted(r for r in [docstring, *ranges] if r is not None)))


def _docstring_range(node: Node) -> tuple[int, int] | None:
    """The bytes between the docstring's quotes."""
    body = node.child_by_field_name("body")
    first = body.named_children[0] if body is not None and body.named_child_count else None
    if first is None or first.type != "expression_statement" or first.named_child_count != 1:
        return None
    string = first.named_children[0]
    if string.type != "string" or string.named_child_count < 2:
        return None
    start, end = string.named_children[0], string.named_children[-1]
    # f-strings and bytes are not docstrings in Python either.
    if any(p in _text(start.text).lower() for p in "fb"):
        return None
    return start.end_byte, end.start_byte


def _hash_rows(lines: list[bytes], row: int) -> list[int]:
    """The rows of the `#` lines right above `row`, top first."""
    found: list[int] = []
    while row > 0 and lines[row - 1].strip().startswith(b"#"):
        row -= 1
        found.append(row)
    return found[::-1]


def _comment_range(span: Node, lines: list[bytes], row: int) -> tuple[int, int] | None:
    """The comment a `#` line holds, as the tree has it: a line of a string literal that starts
    with `#` is no comment, and blanking it would change what the file means."""
    column = lines[row].index(b"#")
    root = span
    while root.parent is not None:
        root = root.parent
    found = root.descendant_for_point_range((row, column), (row, column + 1))
    return (found.start_byte, found.end_byte) if found is not None and found.type == "comment" else None
