"""Building a corpus's reference graph from its files with tree-sitter.

Each file is parsed once more (its symbols are already extracted); every call, base-class
clause and import in it is read and resolved by name against the corpus's symbols:

- a call belongs to the innermost symbol around it, and its callee is the name called
  (`f()`, `x.f()`, `X::f()`, `new F()`); it resolves to the one symbol of that name whose
  parent is the qualifier (`self`/`this`: the caller's own class; `X.f`, `X::f`: X), else
  the one in the caller's file, else the one in the corpus. A bare `f()` cannot mean a
  method (but in Java, where it is `this.f()`), and `x.f()` can mean a free function only
  in a module named x. More than one candidate is ambiguous, none unresolved (a library
  or builtin), and both are only counted: a guessed edge would pass for a real one;
- a class, interface, struct or trait inherits from the bases its header names (Python
  bases, `extends`/`implements`, Rust `impl Trait for Type` and supertraits, Go embedded
  struct fields), resolved the same way among type-like symbols; a method overrides the
  nearest base's method of the same name, following bases upward;
- imports are resolved to corpus files by `crmatrix.graph.imports`.
"""

from __future__ import annotations

import posixpath
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tree_sitter import Node

from crmatrix.corpora.languages import language_for
from crmatrix.graph import Graph, symbol_id
from crmatrix.graph.imports import resolve_imports
from crmatrix.symbols import Symbol, symbols_hash
from crmatrix.symbols.grammars import parser

# Node types of calls, and the field holding what is called.
_CALLS = {"call": "function", "call_expression": "function", "new_expression": "constructor",
          "method_invocation": "name", "object_creation_expression": "type", "macro_invocation": "macro"}
# Member-like callee nodes: (field of the name, field of its qualifier).
_MEMBERS = {"attribute": ("attribute", "object"), "member_expression": ("property", "object"),
            "selector_expression": ("field", "operand"), "field_expression": ("field", "value"),
            "scoped_identifier": ("name", "path"), "scoped_type_identifier": ("name", "path"),
            "generic_type": ("type", None), "generic_function": ("function", None)}
_NAMES = frozenset({"identifier", "type_identifier", "property_identifier", "field_identifier"})
_SELF = frozenset({"self", "this", "super"})
# Symbols a call can mean, and symbols a base clause can mean.
_CALLABLE = frozenset({"function", "method", "class", "struct", "enum", "macro"})
_TYPES = frozenset({"class", "interface", "struct", "trait", "enum", "type"})
# Children of a class-like node that list its bases.
_BASE_CLAUSES = frozenset({"class_heritage", "extends_type_clause", "superclass",
                           "super_interfaces", "extends_interfaces", "trait_bounds"})


@dataclass(frozen=True)
class _Ref:
    """A name used at one place of a file: a call's callee or a class's base."""

    line: int  # 1-based
    name: str
    qualifier: str | None  # "self" for self/this, a simple name, or None


def build(root: Path, files: list[str], symbols: list[Symbol]) -> Graph:
    """The graph of the corpus at `root`; `files` are its paths, `symbols` its extracted symbols."""
    resolver = _Resolver(symbols)
    calls: set[tuple[int, int]] = set()
    bases: set[tuple[int, int]] = set()
    counts = {"calls": Counter(), "inherits": Counter()}
    sources: dict[str, bytes] = {}
    for path in files:
        language = language_for(path)
        if language is None or not (root / path).is_file():
            continue
        source = sources[path] = (root / path).read_bytes()
        tree = parser(language).parse(source)
        by_line = resolver.owners(path)
        for node in _nodes(tree.root_node):
            if node.type in _CALLS:
                ref = _call_ref(node)
                caller = resolver.enclosing(node, path, by_line) if ref else None
                if caller is not None:
                    callee, outcome = resolver.resolve(ref, caller, _CALLABLE, call=True)
                    counts["calls"][outcome] += 1
                    if callee is not None:
                        calls.add((caller, callee))
            for cls, ref in _base_refs(node, resolver, path):
                base, outcome = resolver.resolve(ref, cls, _TYPES)
                counts["inherits"][outcome] += 1
                if base is not None and base != cls:
                    bases.add((cls, base))
    overrides = resolver.overrides(bases)
    go_mod = (root / "go.mod").read_bytes() if "go.mod" in files else None
    imports, import_counts = resolve_imports(sources, files, go_mod)
    ids = [symbol_id(s) for s in symbols]
    pairs = lambda edges: sorted([ids[a], ids[b]] for a, b in edges)  # noqa: E731
    return Graph(
        symbols=len(symbols), symbols_hash=symbols_hash(symbols), calls=pairs(calls), inherits=pairs(bases),
        overrides=pairs(overrides), imports=imports,
        counts={"calls": _outcomes(counts["calls"]), "inherits": _outcomes(counts["inherits"]),
                "overrides": len(overrides), "imports": import_counts})


def _outcomes(c: Counter) -> dict:
    keys = ("qualified", "same_file", "unique", "ambiguous", "unresolved")
    return {"found": sum(c.values()), **{k: c[k] for k in keys}}


def _nodes(root: Node) -> Iterator[Node]:
    stack = [root]  # explicit: generated code nests deeper than Python's recursion limit
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(node.named_children))


def _text(node: Node | None) -> str:
    return node.text.decode("utf-8", errors="replace") if node is not None else ""


def _name_of(node: Node | None) -> tuple[str, str | None]:
    """(name, qualifier) of a callee or base expression; ("", None) when it names nothing."""
    while node is not None and node.type in _MEMBERS:
        name_field, qualifier_field = _MEMBERS[node.type]
        qualifier = node.child_by_field_name(qualifier_field) if qualifier_field else None
        inner = node.child_by_field_name(name_field)
        if qualifier is not None or inner is None or inner.type in _NAMES:
            return _text(inner), _qualifier(qualifier)
        node = inner
    if node is not None and node.type in _NAMES:
        return _text(node), None
    return "", None


def _qualifier(node: Node | None) -> str | None:
    if node is None:
        return None
    if node.type in _SELF or _text(node) in _SELF:
        return "self"
    if node.type in _NAMES:
        return _text(node)
    if node.type in ("scoped_identifier", "scoped_type_identifier", "generic_type"):
        return _name_of(node)[0] or None
    return None


def _call_ref(node: Node) -> _Ref | None:
    target = node.child_by_field_name(_CALLS[node.type])
    if node.type == "method_invocation":  # Java: the name and its object are fields of the call
        obj = node.child_by_field_name("object")
        name, qualifier = _text(target), "self" if obj is None else _qualifier(obj)  # bare `f()` is this.f()
    else:
        name, qualifier = _name_of(target)
    return _Ref(node.start_point.row + 1, name, qualifier) if name else None


def _base_refs(node: Node, resolver: _Resolver, path: str) -> Iterator[tuple[int, _Ref]]:
    """(class symbol, base reference) for each base a class-like node names."""
    line = node.start_point.row + 1
    if node.type == "impl_item":  # Rust: `impl Trait for Type` makes Type an implementer of Trait
        trait = node.child_by_field_name("trait")
        if trait is not None:
            cls = resolver.resolve(_Ref(line, _name_of(node.child_by_field_name("type"))[0], None), None, _TYPES,
                                   path)[0]
            name, qualifier = _name_of(trait)
            if cls is not None and name:
                yield cls, _Ref(line, name, qualifier)
        return
    if node.type == "type_spec":  # Go: embedded fields of a struct
        body = node.child_by_field_name("type")
        cls = resolver.defined_at(path, line, _text(node.child_by_field_name("name")))
        if cls is None or body is None or body.type != "struct_type":
            return
        fields = next((c for c in body.named_children if c.type == "field_declaration_list"), None)
        for f in fields.named_children if fields is not None else ():
            if f.type == "field_declaration" and f.child_by_field_name("name") is None:
                typ = f.child_by_field_name("type")
                typ = typ.named_children[0] if typ is not None and typ.type == "pointer_type" else typ
                name, qualifier = _name_of(typ)
                if name:
                    yield cls, _Ref(f.start_point.row + 1, name, qualifier)
        return
    clauses = [c for c in node.named_children if c.type in _BASE_CLAUSES]
    clauses += node.children_by_field_name("superclasses")  # Python: an argument list
    if not clauses:
        return
    cls = resolver.defined_at(path, line, _text(node.child_by_field_name("name")))
    if cls is None:
        return
    for clause in clauses:
        for expr in _base_expressions(clause):
            name, qualifier = _name_of(expr)
            if name:
                yield cls, _Ref(expr.start_point.row + 1, name, qualifier)


def _base_expressions(clause: Node) -> Iterator[Node]:
    """The type expressions a base clause lists, through the clause's own wrappers."""
    for child in clause.named_children:
        if child.type in ("extends_clause", "implements_clause", "type_list", "trait_bounds"):
            yield from _base_expressions(child)
        elif child.type in _NAMES or child.type in _MEMBERS:
            yield child


def _module_name(path: str) -> str:
    """What code calls the module of `path`: its file stem, or its directory for a package file."""
    directory, name = posixpath.split(path)
    stem = name.rsplit(".", 1)[0]
    return posixpath.basename(directory) if stem in ("__init__", "index", "mod", "lib") else stem


class _Resolver:
    """The corpus's symbols by name, file and line, and the resolution rule of the module docstring."""

    def __init__(self, symbols: list[Symbol]):
        self.symbols = symbols
        self.by_name: dict[str, list[int]] = {}
        self.by_file: dict[str, list[int]] = {}
        self.by_file_name: dict[tuple[str, str], list[int]] = {}
        for i, s in enumerate(symbols):
            self.by_name.setdefault(s.name, []).append(i)
            self.by_file.setdefault(s.path, []).append(i)
            self.by_file_name.setdefault((s.path, s.name), []).append(i)

    def owners(self, path: str):
        """line -> index of the innermost symbol spanning it in `path`, or None."""
        owner: dict[int, int] = {}
        # wider spans first, so a nested symbol paints over its parent's lines
        for i in sorted(self.by_file.get(path, ()),
                        key=lambda i: self.symbols[i].start_line - self.symbols[i].end_line):
            for line in range(self.symbols[i].start_line, self.symbols[i].end_line + 1):
                owner[line] = i
        return owner.get

    def defined_at(self, path: str, line: int, name: str) -> int | None:
        """The symbol named `name` that `path` defines around `line` (its header's line)."""
        spans = [i for i in self.by_file_name.get((path, name), ())
                 if self.symbols[i].start_line <= line <= self.symbols[i].end_line]
        return min(spans, key=lambda i: self.symbols[i].end_line - self.symbols[i].start_line) if spans else None

    def enclosing(self, node: Node, path: str, by_line) -> int | None:
        """The symbol whose definition holds `node`: the nearest named ancestor that is one
        (two definitions can share a line), else the innermost symbol spanning its line."""
        parent = node.parent
        while parent is not None:
            name = parent.child_by_field_name("name")
            if name is not None:
                found = self.defined_at(path, parent.start_point.row + 1, _text(name))
                if found is not None:
                    return found
            parent = parent.parent
        return by_line(node.start_point.row + 1)

    def resolve(self, ref: _Ref, user: int | None, kinds: frozenset[str], path: str | None = None,
                call: bool = False) -> tuple[int | None, str]:
        """The symbol `ref` names from inside symbol `user` (or file `path`), with how it was found."""
        candidates = [i for i in self.by_name.get(ref.name, ()) if self.symbols[i].kind in kinds]
        here = self.symbols[user] if user is not None else None
        owner = (here.parent if here is not None else None) if ref.qualifier == "self" else ref.qualifier
        if owner:
            qualified = [i for i in candidates if self.symbols[i].parent == owner]
            if len(qualified) == 1:
                return qualified[0], "qualified"
        if call and ref.qualifier is None:
            candidates = [i for i in candidates if self.symbols[i].kind != "method"]
        elif call:
            candidates = [i for i in candidates if self.symbols[i].kind == "method"
                          or _module_name(self.symbols[i].path) == ref.qualifier]
        if not candidates:
            return None, "unresolved"
        path = here.path if here is not None else path
        same_file = [i for i in candidates if self.symbols[i].path == path]
        if len(same_file) == 1:
            return same_file[0], "same_file"
        if len(same_file) > 1:
            return None, "ambiguous"
        return (candidates[0], "unique") if len(candidates) == 1 else (None, "ambiguous")

    def overrides(self, bases: set[tuple[int, int]]) -> set[tuple[int, int]]:
        """(method, the base method it overrides): the nearest base up the chain that has one."""
        up: dict[int, list[int]] = {}
        for cls, base in sorted(bases):
            up.setdefault(cls, []).append(base)
        methods: dict[str, list[int]] = {}  # parent name -> its methods
        for i, s in enumerate(self.symbols):
            if s.kind == "method":
                methods.setdefault(s.parent, []).append(i)
        found = set()
        for cls in sorted(up):
            for m in self._methods_of(cls, methods):
                target = self._nearest(up, cls, self.symbols[m].name, methods)
                if target is not None and target != m:
                    found.add((m, target))
        return found

    def _methods_of(self, cls: int, methods: dict[str, list[int]]) -> list[int]:
        c = self.symbols[cls]
        # Rust impls and Go receivers put a type's methods anywhere; elsewhere they are in its file.
        anywhere = c.language in ("rust", "go")
        return [i for i in methods.get(c.name, ()) if anywhere or self.symbols[i].path == c.path]

    def _nearest(self, up: dict[int, list[int]], cls: int, name: str, methods: dict[str, list[int]]) -> int | None:
        seen, frontier = {cls}, list(up.get(cls, ()))
        while frontier:  # breadth first: the nearest base that defines the method wins
            nxt = []
            for base in frontier:
                if base in seen:
                    continue
                seen.add(base)
                there = [i for i in self._methods_of(base, methods) if self.symbols[i].name == name]
                if len(there) == 1:
                    return there[0]
                nxt.extend(up.get(base, ()))
            frontier = nxt
        return None
