"""Per-language rules: which tree-sitter nodes are definitions, of what kind, under which
parent, and whether their subtree can hold more (Python, Rust, Go, Java, and TypeScript, TSX
and JavaScript by one set of rules)."""

from __future__ import annotations

from tree_sitter import Node

from crmatrix.symbols.tree import Classifier, Def, Scope, decode, define, name_of

_JS_FUNCTIONS = frozenset({"arrow_function", "function_expression", "generator_function"})


def _python(node: Node, scope: Scope) -> tuple[Def | None, Scope | None]:
    if node.type == "class_definition":
        name = name_of(node)
        return define(node, name, "class", scope[0]), (name, "class")
    if node.type == "function_definition":
        name = name_of(node)
        kind = "method" if scope[1] == "class" else "function"
        return define(node, name, kind, scope[0]), (name, "function")
    return None, scope


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
        return define(node, name_of(node), kind, scope[0]), None
    if node.type in ("function_item", "function_signature_item"):
        name = name_of(node)
        kind = "method" if scope[1] in ("impl", "trait") else "function"
        return define(node, name, kind, scope[0]), (name, "function")
    if node.type in ("trait_item", "mod_item"):
        name, kind = name_of(node), "trait" if node.type == "trait_item" else "module"
        return define(node, name, kind, scope[0]), (name, kind)
    if node.type == "impl_item":
        return None, (_rust_type_name(node.child_by_field_name("type")), "impl")
    return None, scope


def _rust_type_name(node: Node | None) -> str:
    """`Foo` for `Foo<T>`, `&Foo`, `crate::x::Foo`; other types as written."""
    while node is not None and node.type in ("generic_type", "reference_type", "scoped_type_identifier"):
        node = node.child_by_field_name("name" if node.type == "scoped_type_identifier" else "type")
    return " ".join(decode(node.text).split()) if node is not None else ""


def _go(node: Node, scope: Scope) -> tuple[Def | None, Scope | None]:
    # Go has no named nested functions, so only top-level declarations matter.
    if node.type == "function_declaration":
        return define(node, name_of(node), "function", ""), None
    if node.type == "method_declaration":
        receiver = _go_receiver_type(node.child_by_field_name("receiver"))
        return define(node, name_of(node), "method", receiver), None
    if node.type == "type_declaration":
        return None, scope
    if node.type in ("type_spec", "type_alias"):
        type_node = node.child_by_field_name("type")
        kind = {"struct_type": "struct", "interface_type": "interface"}.get(
            type_node.type if type_node is not None else "", "type"
        )
        header = type_node if kind != "type" else None
        return define(node, name_of(node), kind, "", header), None
    return None, None


def _go_receiver_type(receiver: Node | None) -> str:
    """`Context` for receivers such as `(c *Context)` or `(l *List[T])`."""
    node = receiver
    while node is not None and node.type != "type_identifier":
        node = next((c for c in node.named_children if c.type != "identifier"), None)
        if node is not None and node.type == "generic_type":
            node = node.child_by_field_name("type")
    return decode(node.text) if node is not None else ""


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
        name = name_of(node)
        return define(node, name, kind, scope[0]), (name, "class")
    if node.type in ("method_declaration", "constructor_declaration"):
        # Anonymous classes inside keep the named enclosing type as parent.
        return define(node, name_of(node), "method", scope[0]), scope
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
        name = name_of(node)
        return define(node, name, kind, scope[0]), (name, _scope_tag(kind))
    kind = _ECMA_LEAVES.get(node.type)
    if kind is not None:
        return define(node, name_of(node), kind, scope[0]), None
    if node.type == "method_definition":
        name = name_of(node)
        return define(node, name, "method", scope[0]), (name, "function")
    if node.type == "abstract_method_signature" or (
        node.type == "method_signature" and scope[1] == "interface"
    ):
        return define(node, name_of(node), "method", scope[0]), None
    if node.type == "variable_declarator":
        return _ecma_declarator(node, scope)
    if node.type == "assignment_expression":
        return _ecma_assignment(node, scope)
    if node.type == "class" and node.parent is not None and node.parent.type != "variable_declarator":
        # An unbound class expression (mixins, `export default class {}`).
        return None, (name_of(node) or scope[0], "class")
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
    name = decode(name_node.text)
    if value.type in _JS_FUNCTIONS:
        return define(node, name, "function", scope[0], header=value), (name, "function")
    if value.type == "class":
        return define(node, name, "class", scope[0], header=value), (name, "class")
    if value.type == "object":
        return None, (name, "object")
    return None, scope


def _ecma_assignment(node: Node, scope: Scope) -> tuple[Def | None, Scope | None]:
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    if left is None or right is None or left.type != "member_expression":
        return None, scope
    if right.type == "object":
        return None, (name_of(left, "property"), "object")
    if right.type not in _JS_FUNCTIONS:
        return None, scope
    if decode(left.text) == "module.exports":
        # `module.exports = function createApplication() {}` names itself.
        name = name_of(right)
        if not name:
            return None, scope
        return define(node, name, "function", "", header=right), (name, "function")
    name, owner = name_of(left, "property"), _js_owner(left.child_by_field_name("object"))
    kind = "function" if owner == "exports" else "method"
    return define(node, name, kind, owner, header=right), (name, "function")


def _js_owner(node: Node | None) -> str:
    """`Foo` for `Foo.prototype`, `b` for `a.b`; other objects as written."""
    if node is not None and node.type == "member_expression" and name_of(node, "property") == "prototype":
        node = node.child_by_field_name("object")
    if node is not None and node.type == "member_expression":
        return name_of(node, "property")
    return " ".join(decode(node.text).split()) if node is not None else ""


CLASSIFIERS: dict[str, Classifier] = {
    "python": _python,
    "rust": _rust,
    "go": _go,
    "java": _java,
    "typescript": _ecma,
    "tsx": _ecma,
    "javascript": _ecma,
}
