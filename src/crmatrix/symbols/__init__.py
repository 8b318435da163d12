"""Tree-sitter extraction of code symbols (definitions) from source files.

Supports Python, Rust, TypeScript, TSX, JavaScript, Go and Java.  Each symbol
carries its location, a one-line signature, its leading documentation and the
exact source text of the definition, so later pipeline stages can index and
match symbols without re-parsing.
"""

from __future__ import annotations

import inspect
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
from tree_sitter import Language, Node, Parser

from crmatrix.atomic import hash_obj, read_jsonl
from crmatrix.corpora.languages import language_for
from crmatrix.progress import Progress

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

_COMMENT_TYPES = frozenset({"comment", "line_comment", "block_comment"})
# Attributes and decorators sit between a definition and its doc comment.
_DOC_TRANSPARENT = frozenset({"attribute_item", "decorator"})
# A tuple struct's field list belongs to its header, not to a body.
_HEADER_BODIES = frozenset({"ordered_field_declaration_list"})
_JS_FUNCTIONS = frozenset({"arrow_function", "function_expression", "generator_function"})


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


@dataclass(frozen=True)
class _Def:
    """A definition as located in the tree, before it becomes a Symbol."""

    node: Node  # the definition itself (its body decides where the signature ends)
    span: Node  # the definition plus wrappers such as decorators or `export`
    name: str
    kind: str
    parent: str
    head_end: int  # byte offset where the signature stops


# (name, kind) of the innermost enclosing definition; kind is an internal tag.
_Scope = tuple[str, str]
# Decides whether a node is a definition and how to walk below it: a scope of
# None means its subtree holds no symbols of interest.
_Classifier = Callable[[Node, _Scope], tuple[_Def | None, _Scope | None]]


def extract_source(source: bytes, path: str, language: str) -> list[Symbol]:
    """All symbols defined in `source`, sorted like `extract_files`."""
    tree = parser(language).parse(source)
    classify = _CLASSIFIERS[language]
    lines = source.split(b"\n")
    symbols = [
        _to_symbol(d, source, lines, path, language)
        for d in _walk(tree.root_node, classify)
    ]
    return sorted(symbols, key=_sort_key)


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


def _walk(root: Node, classify: _Classifier) -> list[_Def]:
    # An explicit stack: generated or minified code nests deeper than Python's
    # recursion limit.
    found: list[_Def] = []
    stack: list[tuple[Node, _Scope]] = [(root, ("", ""))]
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


def _to_symbol(d: _Def, source: bytes, lines: list[bytes], path: str, language: str) -> Symbol:
    span = d.span
    head = source[_head_start(span) : d.head_end]
    return Symbol(
        name=d.name,
        kind=d.kind,
        parent=d.parent,
        path=path,
        language=language,
        start_line=span.start_point.row + 1,
        end_line=_last_row(span) + 1,
        signature=" ".join(_text(head).split())[:SIGNATURE_MAX],
        doc=_python_doc(d, source, lines) if language == "python" else _comment_doc(span, language),
        body=_text(source[span.start_byte : span.end_byte]),
    )


def _text(data: bytes | None) -> str:
    return data.decode("utf-8", errors="replace") if data else ""


def _last_row(node: Node) -> int:
    # A node ending at column 0 (e.g. a Rust line comment) only swallowed the
    # previous line's newline.
    row = node.end_point.row
    return row - 1 if node.end_point.column == 0 and row > node.start_point.row else row


def _name(node: Node, field: str = "name") -> str:
    child = node.child_by_field_name(field)
    return _text(child.text) if child is not None else ""


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


def _head_start(span: Node) -> int:
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


def _define(node: Node, name: str, kind: str, parent: str, header: Node | None = None) -> _Def:
    return _Def(node, _span(node), name, kind, parent, _head_end(header or node))


# --- documentation --------------------------------------------------------


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
        if _last_row(sibling) < row - max_gap or _trails_code(sibling):
            break
        if sibling.type in _COMMENT_TYPES:
            comments.append(_clean_comment(_text(sibling.text)))
        row = sibling.start_point.row
        sibling = sibling.prev_sibling
    return "\n".join(reversed(comments)).strip()


def _trails_code(comment: Node) -> bool:
    # `x = 1; // note` documents the line it ends, not the next definition.
    before = comment.prev_sibling
    return before is not None and _last_row(before) == comment.start_point.row


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


def _python_doc(d: _Def, source: bytes, lines: list[bytes]) -> str:
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
    if any(p in _text(start.text).lower() for p in "fb"):
        return ""
    return inspect.cleandoc(_text(source[start.end_byte : end.start_byte]))


def _hash_comments(lines: list[bytes], row: int) -> str:
    found: list[str] = []
    while row > 0 and lines[row - 1].strip().startswith(b"#"):
        row -= 1
        found.append(_text(lines[row].strip()[1:]).removeprefix(" ").rstrip())
    return "\n".join(reversed(found))


# --- per-language classification ------------------------------------------


def _python(node: Node, scope: _Scope) -> tuple[_Def | None, _Scope | None]:
    if node.type == "class_definition":
        name = _name(node)
        return _define(node, name, "class", scope[0]), (name, "class")
    if node.type == "function_definition":
        name = _name(node)
        kind = "method" if scope[1] == "class" else "function"
        return _define(node, name, kind, scope[0]), (name, "function")
    return None, scope


_RUST_ITEMS = {
    "struct_item": "struct",
    "enum_item": "enum",
    "type_item": "type",
    "macro_definition": "macro",
    "const_item": "constant",
    "static_item": "constant",
}


def _rust(node: Node, scope: _Scope) -> tuple[_Def | None, _Scope | None]:
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


def _go(node: Node, scope: _Scope) -> tuple[_Def | None, _Scope | None]:
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


def _java(node: Node, scope: _Scope) -> tuple[_Def | None, _Scope | None]:
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


def _ecma(node: Node, scope: _Scope) -> tuple[_Def | None, _Scope | None]:
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


def _ecma_declarator(node: Node, scope: _Scope) -> tuple[_Def | None, _Scope | None]:
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


def _ecma_assignment(node: Node, scope: _Scope) -> tuple[_Def | None, _Scope | None]:
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


_CLASSIFIERS: dict[str, _Classifier] = {
    "python": _python,
    "rust": _rust,
    "go": _go,
    "java": _java,
    "typescript": _ecma,
    "tsx": _ecma,
    "javascript": _ecma,
}
