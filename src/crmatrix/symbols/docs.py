"""A definition's documentation: a Python docstring (else the `#` comments right above it), or
in the other languages the comments right above it, markers stripped."""

from __future__ import annotations

import inspect

from tree_sitter import Node

from crmatrix.symbols.tree import Def, decode, last_row

_COMMENT_TYPES = frozenset({"comment", "line_comment", "block_comment"})
# Attributes and decorators sit between a definition and its doc comment.
_DOC_TRANSPARENT = frozenset({"attribute_item", "decorator"})


def doc(d: Def, source: bytes, lines: list[bytes], language: str) -> str:
    return _python_doc(d, source, lines) if language == "python" else _comment_doc(d.span, language)


def _comment_doc(span: Node, language: str) -> str:
    """Adjacent comments right above a definition, markers stripped."""
    # JSDoc in CommonJS libraries (express) is often followed by one blank
    # line; elsewhere a blank line separates unrelated comments (Go banners).
    first_gap = 2 if language in ("javascript", "typescript", "tsx") else 1
    comments: list[str] = []
    row = span.start_point.row
    sibling = span.prev_sibling
    while sibling is not None and (sibling.type in _COMMENT_TYPES or sibling.type in _DOC_TRANSPARENT):
        max_gap = 1 if comments else first_gap
        if last_row(sibling) < row - max_gap or _trails_code(sibling):
            break
        if sibling.type in _COMMENT_TYPES:
            comments.append(_clean_comment(decode(sibling.text)))
        row = sibling.start_point.row
        sibling = sibling.prev_sibling
    return "\n".join(reversed(comments)).strip()


def _trails_code(comment: Node) -> bool:
    # `x = 1; // note` documents the line it ends, not the next definition.
    before = comment.prev_sibling
    return before is not None and last_row(before) == comment.start_point.row


def _clean_comment(comment: str) -> str:
    comment = comment.strip()
    if comment.startswith("/*"):
        inner = comment[2:].removesuffix("*/")
        inner = inner[1:] if inner[:1] in ("*", "!") else inner
        lines = [line.strip().removeprefix("*").strip() for line in inner.splitlines()]
    else:
        lines = [_strip_line_marker(line.strip()) for line in comment.splitlines()]
    return "\n".join(lines).strip()


def _strip_line_marker(line: str) -> str:
    for marker in ("///", "//!", "//"):
        if line.startswith(marker):
            return line[len(marker) :].strip()
    return line


def _python_doc(d: Def, source: bytes, lines: list[bytes]) -> str:
    return _docstring(d.node, source) or _hash_comments(lines, d.span.start_point.row)


def _docstring(node: Node, source: bytes) -> str:
    body = node.child_by_field_name("body")
    first = body.named_children[0] if body is not None and body.named_child_count else None
    if first is None or first.type != "expression_statement" or first.named_child_count != 1:
        return ""
    string = first.named_children[0]
    if string.type != "string" or string.named_child_count < 2:
        return ""
    start, end = string.named_children[0], string.named_children[-1]
    # f-strings and bytes are not docstrings in Python either.
    if any(p in decode(start.text).lower() for p in "fb"):
        return ""
    return inspect.cleandoc(decode(source[start.end_byte : end.start_byte]))


def _hash_comments(lines: list[bytes], row: int) -> str:
    found: list[str] = []
    while row > 0 and lines[row - 1].strip().startswith(b"#"):
        row -= 1
        found.append(decode(lines[row].strip()[1:]).removeprefix(" ").rstrip())
    return "\n".join(reversed(found))
