"""Reading tree-sitter nodes: their text, last row and named fields (extraction and docs)."""

from __future__ import annotations

from tree_sitter import Node


def text(data: bytes | None) -> str:
    return data.decode("utf-8", errors="replace") if data else ""


def last_row(node: Node) -> int:
    # A node ending at column 0 (e.g. a Rust line comment) only swallowed the
    # previous line's newline.
    row = node.end_point.row
    return row - 1 if node.end_point.column == 0 and row > node.start_point.row else row


def name(node: Node, field: str = "name") -> str:
    child = node.child_by_field_name(field)
    return text(child.text) if child is not None else ""
