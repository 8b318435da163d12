"""Where the definitions of a parsed file are, per language: each one's node, its span
(with decorators, `export` and other wrappers), name, kind, parent and where its header
(the signature) ends."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tree_sitter import Node

from crmatrix.symbols.nodes import name as _name
from crmatrix.symbols.nodes import text as _text

# A tuple struct's field list belongs to its header, not to a body.
_HEADER_BODIES = frozenset({"ordered_field_declaration_list"})
_JS_FUNCTIONS = frozenset({"arrow_function", "function_expression", "generator_function"})


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


def walk(root: Node, classify: Classifier) -> list[Def]:
    # An explicit stack: generated or minified code nests deeper than Python's
    # recursion limit.
    found: list[Def] = []
    stack: list[tuple[Node, Scope]] = [(root, ("", ""))]
    while stack:
        node, scope = stack.pop()
        for child in node.named_children:
            definition, inner = classify(child, scope)
            # Error recovery can yield a definition without its name.
            if definition is not None and definition.name:
                found.append(definition)
            if inner is not None and child.named_child_count:
                stack.append((child, inner))
    return found


# --- spans and signatures -------------------------------------------------


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


def _define(node: Node, name: str, kind: str, parent: str, header: Node | None = None) -> Def:
    return Def(node, _span(node), name, kind, parent, _head_end(header or node))


# --- per-language classification ------------------------------------------


# What a Python definition can lie under: the grammar puts a def or a class in a module, a block or
# a decorated definition alone, and a block in these statements alone. Any other subtree (an
# expression, a simple statement) holds none, unless error recovery put one there (`has_error`).
# Walking those subtrees was most of extracting a repository (sympy: their nodes are most nodes).
_PYTHON_HOLDERS = frozenset({
    "module", "block", "decorated_definition", "if_statement", "elif_clause", "else_clause", "for_statement",
    "while_statement", "try_statement", "except_clause", "except_group_clause", "finally_clause", "with_statement",
    "match_statement", "case_clause",
})


def _python(node: Node, scope: Scope) -> tuple[Def | None, Scope | None]:
    if node.type == "class_definition":
        name = _name(node)
        return _define(node, name, "class", scope[0]), (name, "class")
    if node.type == "function_definition":
        name = _name(node)
        kind = "method" if scope[1] == "class" else "function"
        return _define(node, name, kind, scope[0]), (name, "function")
    return None, scope if node.type in _PYTHON_HOLDERS or node.has_error else None


_RUST_ITEMS = {
    "struct_item": "struct",
    "enum_item": "enum",
    "type_item": "type",
    "macro_definition": "macro",
    "const_item": "constant",
    "static_item": "constant",
}


def _rust(node: Node, scope: Scope) -> tuple[Def | None, Scope | None]:
    kind = _RUST_ITEMS.get(node.type)
    if kind is not None:
        return _define(node, _name(node), kind, scope[0]), None
    if node.type in ("function_item", "function_signature_item"):
        name = _name(node)
        kind = "method" if scope[1] in ("impl", "trait") else "function"
        return _define(node, name, kind, scope[0]), (name, "function")
    if node.type in ("trait_item", "mod_item"):
        name, kind = _name(node), "trait" if node.type == "trait_item" else "module"
        return _define(node, name, kind, scope[0]), (name, kind)
    if node.type == "impl_item":
        return None, (_rust_type_name(node.child_by_field_name("type")), "impl")
    return None, scope


def _rust_type_name(node: Node | None) -> str:
    """`Foo` for `Foo<T>`, `&Foo`, `crate::x::Foo`; other types as written."""
    while node is not None and node.type in ("generic_type", "reference_type", "scoped_type_identifier"):
        node = node.child_by_field_name("name" if node.type == "scoped_type_identifier" else "type")
    return " ".join(_text(node.text).split()) if node is not None else ""


def _go(node: Node, scope: Scope) -> tuple[Def | None, Scope | None]:
    # Go has no named nested functions, so only top-level declarations matter.
    if node.type == "function_declaration":
        return _define(node, _name(node), "function", ""), None
    if node.type == "method_declaration":
        receiver = _go_receiver_type(node.child_by_field_name("receiver"))
        return _define(node, _name(node), "method", receiver), None
    if node.type == "type_declaration":
        return None, scope
    if node.type in ("type_spec", "type_alias"):
        type_node = node.child_by_field_name("type")
        kind = {"struct_type": "struct", "interface_type": "interface"}.get(
            type_node.type if type_node is not None else "", "type"
        )
        header = type_node if kind != "type" else None
        return _define(node, _name(node), kind, "", header), None
    return None, None


def _go_receiver_type(receiver: Node | None) -> str:
    """`Context` for receivers such as `(c *Context)` or `(l *List[T])`."""
    node = receiver
    while node is not None and node.type != "type_identifier":
        node = next((c for c in node.named_children if c.type != "identifier"), None)
        if node is not None and node.type == "generic_type":
            node = node.child_by_field_name("type")
    return _text(node.text) if node is not None else ""


_JAVA_TYPES = {
    "class_declaration": "class",
    "record_declaration": "class",
    "interface_declaration": "interface",
    "annotation_type_declaration": "interface",
    "enum_declaration": "enum",
}


def _java(node: Node, scope: Scope) -> tuple[Def | None, Scope | None]:
    kind = _JAVA_TYPES.get(node.type)
    if kind is not None:
        name = _name(node)
        return _define(node, name, kind, scope[0]), (name, "class")
    if node.type in ("method_declaration", "constructor_declaration"):
        # Anonymous classes inside keep the named enclosing type as parent.
        return _define(node, _name(node), "method", scope[0]), scope
    return None, scope


_ECMA_DECLARATIONS = {
    "function_declaration": "function",
    "generator_function_declaration": "function",
    "class_declaration": "class",
    "abstract_class_declaration": "class",
    "interface_declaration": "interface",
}
_ECMA_LEAVES = {"type_alias_declaration": "type", "enum_declaration": "enum"}


def _ecma(node: Node, scope: Scope) -> tuple[Def | None, Scope | None]:
    """TypeScript, TSX and JavaScript."""
    kind = _ECMA_DECLARATIONS.get(node.type)
    if kind is not None:
        name = _name(node)
        return _define(node, name, kind, scope[0]), (name, _scope_tag(kind))
    kind = _ECMA_LEAVES.get(node.type)
    if kind is not None:
        return _define(node, _name(node), kind, scope[0]), None
    if node.type == "method_definition":
        name = _name(node)
        return _define(node, name, "method", scope[0]), (name, "function")
    if node.type == "abstract_method_signature" or (
        node.type == "method_signature" and scope[1] == "interface"
    ):
        return _define(node, _name(node), "method", scope[0]), None
    if node.type == "variable_declarator":
        return _ecma_declarator(node, scope)
    if node.type == "assignment_expression":
        return _ecma_assignment(node, scope)
    if node.type == "class" and node.parent is not None and node.parent.type != "variable_declarator":
        # An unbound class expression (mixins, `export default class {}`).
        return None, (_name(node) or scope[0], "class")
    if node.type in _JS_FUNCTIONS and node.parent is not None and node.parent.type == "arguments":
        # Callbacks (test bodies, operator internals) are not named API.
        return None, None
    return None, scope


def _scope_tag(kind: str) -> str:
    return kind if kind in ("class", "interface") else "function"


def _ecma_declarator(node: Node, scope: Scope) -> tuple[Def | None, Scope | None]:
    name_node, value = node.child_by_field_name("name"), node.child_by_field_name("value")
    if name_node is None or name_node.type != "identifier" or value is None:
        return None, scope
    name = _text(name_node.text)
    if value.type in _JS_FUNCTIONS:
        return _define(node, name, "function", scope[0], header=value), (name, "function")
    if value.type == "class":
        return _define(node, name, "class", scope[0], header=value), (name, "class")
    if value.type == "object":
        return None, (name, "object")
    return None, scope


def _ecma_assignment(node: Node, scope: Scope) -> tuple[Def | None, Scope | None]:
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    if left is None or right is None or left.type != "member_expression":
        return None, scope
    if right.type == "object":
        return None, (_name(left, "property"), "object")
    if right.type not in _JS_FUNCTIONS:
        return None, scope
    if _text(left.text) == "module.exports":
        # `module.exports = function createApplication() {}` names itself.
        name = _name(right)
        if not name:
            return None, scope
        return _define(node, name, "function", "", header=right), (name, "function")
    name, owner = _name(left, "property"), _js_owner(left.child_by_field_name("object"))
    kind = "function" if owner == "exports" else "method"
    return _define(node, name, kind, owner, header=right), (name, "function")


def _js_owner(node: Node | None) -> str:
    """`Foo` for `Foo.prototype`, `b` for `a.b`; other objects as written."""
    if node is not None and node.type == "member_expression" and _name(node, "property") == "prototype":
        node = node.child_by_field_name("object")
    if node is not None and node.type == "member_expression":
        return _name(node, "property")
    return " ".join(_text(node.text).split()) if node is not None else ""


CLASSIFIERS: dict[str, Classifier] = {
    "python": _python,
    "rust": _rust,
    "go": _go,
    "java": _java,
    "typescript": _ecma,
    "tsx": _ecma,
    "javascript": _ecma,
}
