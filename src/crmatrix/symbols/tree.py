"""Definitions as located in a tree-sitter tree, before they become symbols: the node, its span
with the wrappers that belong to it (decorators, `export`, ...), and where its signature ends."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tree_sitter import Node

# A tuple struct's field list belongs to its header, not to a body.
_HEADER_BODIES = frozenset({"ordered_field_declaration_list"})


@dataclass(frozen=True)
class Def:
    """A definition as located in the tree, before it becomes a Symbol."""

    node: Node  # the definition itself (its body decides where the signature ends)
    span: Node  # the definition plus wrappers such as decorators or `export`
    name: str
    kind: str
    parent: str
    head_end: int  # byte offset where the signature stops


# (name, kind) of the innermost enclosing definition; kind is an internal tag.
Scope = tuple[str, str]
# Decides whether a node is a definition and how to walk below it: a scope of
# None means its subtree holds no symbols of interest.
Classifier = Callable[[Node, Scope], tuple[Def | None, Scope | None]]


def decode(data: bytes | None) -> str:
    return data.decode("utf-8", errors="replace") if data else ""


def last_row(node: Node) -> int:
    # A node ending at column 0 (e.g. a Rust line comment) only swallowed the
    # previous line's newline.
    row = node.end_point.row
    return row - 1 if node.end_point.column == 0 and row > node.start_point.row else row


def name_of(node: Node, field: str = "name") -> str:
    child = node.child_by_field_name(field)
    return decode(child.text) if child is not None else ""


def _span(node: Node) -> Node:
    """The node plus the wrappers that belong to it (decorators, export, ...)."""
    parent = node.parent
    while parent is not None and _wraps(parent, node):
        node, parent = parent, parent.parent
    return node


def _wraps(parent: Node, child: Node) -> bool:
    if parent.type in ("decorated_definition", "export_statement", "ambient_declaration"):
        return True
    if parent.type == "expression_statement":
        return child.type == "assignment_expression"
    if parent.type == "assignment_expression":
        # Chained `res.set = res.header = function header() {}`.
        return parent.child_by_field_name("right") == child
    if parent.type in ("lexical_declaration", "variable_declaration"):
        return _count_named(parent, child.type) == 1
    if parent.type == "type_declaration":
        return _count_named(parent, "type_spec") + _count_named(parent, "type_alias") == 1
    return False


def _count_named(node: Node, child_type: str) -> int:
    return sum(1 for c in node.named_children if c.type == child_type)


def head_start(span: Node) -> int:
    # Like Python's decorators, TS decorators precede the header proper.
    for child in span.children:
        if child.type not in ("decorator", "comment"):
            return child.start_byte
    return span.start_byte


def _head_end(node: Node) -> int:
    """Where a definition's header stops: before its body, else at its end."""
    if node.type in ("function_definition", "class_definition"):
        # Python: stop at the colon so a trailing comment stays out.
        colons = [c for c in node.children if c.type == ":"]
        return colons[-1].start_byte if colons else node.end_byte
    body = node.child_by_field_name("body")
    if body is None:
        # Go struct/interface types and Rust macros have no `body` field.
        body = next(
            (c for c in node.children if c.type in ("{", "(", "[", "field_declaration_list")),
            None,
        )
    if body is None or body.type in _HEADER_BODIES:
        return node.end_byte
    return body.start_byte


def define(node: Node, name: str, kind: str, parent: str, header: Node | None = None) -> Def:
    return Def(node, _span(node), name, kind, parent, _head_end(header or node))

