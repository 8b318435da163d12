"""File-to-file import edges, resolved against the corpus's own paths.

Only what a path rule can settle without a build system: Python modules (absolute, by the
longest matching path suffix, and relative), relative JS/TS specifiers, Go import paths
(by go.mod's module path, else the package directory they end with), Rust `crate::`,
`self::`, `super::` paths and `mod x;`, Java imports by package path. Everything else (a
dependency, a path alias, a wildcard) is counted as unresolved.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator

from tree_sitter import Node

from crmatrix.corpora.languages import language_for
from crmatrix.symbols.grammars import parser

_JS_SUFFIXES = ("", ".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", "/index.ts", "/index.tsx", "/index.js")
_GO_MODULE = re.compile(rb"^module\s+(\S+)", re.M)


def resolve_imports(sources: dict[str, bytes], files: list[str], go_mod: bytes | None = None
                    ) -> tuple[list[list[str]], dict]:
    """Sorted unique [importer, imported] pairs and the counts of imports found and resolved.
    `sources` are the corpus's source files by path, `files` all its paths, `go_mod` the
    text of its go.mod when it has one."""
    index = _PathIndex(files)
    match = _GO_MODULE.search(go_mod) if go_mod else None
    go_module = match.group(1).decode() if match else None
    edges: set[tuple[str, str]] = set()
    found = resolved = 0
    for path, source in sorted(sources.items()):
        language = language_for(path)
        if language is None:
            continue
        root = parser(language).parse(source).root_node
        for spec in _SPECIFIERS[language](root):
            found += 1
            targets = _RESOLVERS[language](index, path, spec, go_module)
            targets = [t for t in targets if t != path]
            if targets:
                resolved += 1
                edges.update((path, t) for t in targets)
    return sorted([a, b] for a, b in edges), {"found": found, "resolved": resolved, "unresolved": found - resolved}


class _PathIndex:
    def __init__(self, files: list[str]):
        self.files = frozenset(files)
        self.dirs: dict[str, list[str]] = {}
        for f in sorted(files):
            self.dirs.setdefault(posixpath.dirname(f), []).append(f)

    def first(self, candidates) -> list[str]:
        return next(([c] for c in candidates if c in self.files), [])

    def by_suffix(self, suffixes: list[str]) -> list[str]:
        """The one corpus file ending with the first suffix that any file ends with (as whole segments)."""
        for suffix in suffixes:
            hits = [f for f in self.files if f == suffix or f.endswith("/" + suffix)]
            if hits:
                return hits if len(hits) == 1 else []
        return []


def _nodes(root: Node, types: frozenset[str]) -> Iterator[Node]:
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type in types:
            yield node
        stack.extend(reversed(node.named_children))


def _text(node: Node | None) -> str:
    return node.text.decode("utf-8", errors="replace") if node is not None else ""


def _string(node: Node | None) -> str:
    return _text(node).strip("\"'`")


# --- specifiers: what each import statement names ----------------------------------------

def _python_specifiers(root: Node) -> Iterator[tuple[str, list[str]]]:
    """(module, imported names): "a.b" for `import a.b`, "..a" with names for `from ..a import x, y`."""
    for node in _nodes(root, frozenset({"import_statement", "import_from_statement"})):
        names = [_text(n.child_by_field_name("name") if n.type == "aliased_import" else n)
                 for n in node.children_by_field_name("name")]
        if node.type == "import_statement":
            yield from ((name, []) for name in names)
        else:
            yield _text(node.child_by_field_name("module_name")), names


def _python_resolve(index: _PathIndex, path: str, spec: tuple[str, list[str]], _go) -> list[str]:
    module, names = spec
    dots = len(module) - len(module.lstrip("."))
    parts = [p for p in module[dots:].split(".") if p]
    if dots:
        base = posixpath.dirname(path)
        for _ in range(dots - 1):
            base = posixpath.dirname(base)
        here = lambda segs: [posixpath.join(base, *segs) + ".py", posixpath.join(base, *segs, "__init__.py")]  # noqa: E731
        out = set()
        for n in names:  # `from .a import x`: x may be a module of its own
            out.update(index.first(here([*parts, n])))
        return sorted(out) or index.first(here(parts) if parts else [posixpath.join(base, "__init__.py")])
    out = set()
    for n in names:
        out.update(index.by_suffix(["/".join([*parts, n]) + ".py", "/".join([*parts, n]) + "/__init__.py"]))
    return sorted(out) or index.by_suffix(["/".join(parts) + ".py", "/".join(parts) + "/__init__.py"])


def _js_specifiers(root: Node) -> Iterator[str]:
    for node in _nodes(root, frozenset({"import_statement", "export_statement", "call_expression"})):
        if node.type == "call_expression":
            fn, args = node.child_by_field_name("function"), node.child_by_field_name("arguments")
            if fn is not None and _text(fn) in ("require", "import") and args is not None \
                    and args.named_child_count == 1 and args.named_children[0].type == "string":
                yield _string(args.named_children[0])
        elif node.child_by_field_name("source") is not None:
            yield _string(node.child_by_field_name("source"))


def _js_resolve(index: _PathIndex, path: str, spec: str, _go) -> list[str]:
    if not spec.startswith("."):
        return []  # a package, or a path alias only a bundler config knows
    target = posixpath.normpath(posixpath.join(posixpath.dirname(path), spec))
    # TypeScript sources import their compiled name: `./x.js` means `./x.ts`
    stem = re.sub(r"\.(js|jsx|mjs|cjs)$", "", target)
    return index.first([target + s for s in _JS_SUFFIXES] + [stem + s for s in _JS_SUFFIXES])


def _go_specifiers(root: Node) -> Iterator[str]:
    for node in _nodes(root, frozenset({"import_spec"})):
        yield _string(node.child_by_field_name("path"))


def _go_resolve(index: _PathIndex, path: str, spec: str, go_module: str | None) -> list[str]:
    if go_module is not None and (spec == go_module or spec.startswith(go_module + "/")):
        package = spec[len(go_module) + 1:]
    else:  # no go.mod in the corpus: the deepest corpus directory the import path ends with
        package = max((d for d in index.dirs if d and (spec == d or spec.endswith("/" + d))), key=len, default=None)
    if package is None:
        return []
    return [f for f in index.dirs.get(package, ()) if f.endswith(".go") and not f.endswith("_test.go")]


def _rust_specifiers(root: Node) -> Iterator[list[str]]:
    """Module paths as segments: `use crate::a::b::C` -> [crate, a, b, C]; `mod x;` -> [self, x]."""
    for node in _nodes(root, frozenset({"use_declaration", "mod_item"})):
        if node.type == "mod_item":
            if node.child_by_field_name("body") is None:
                yield ["self", _text(node.child_by_field_name("name"))]
            continue
        arg = node.child_by_field_name("argument")
        if arg is not None and arg.type in ("scoped_use_list", "use_as_clause"):
            arg = arg.child_by_field_name("path")
        if arg is not None:
            yield [seg for seg in _text(arg).replace(" ", "").split("::") if seg]


def _rust_resolve(index: _PathIndex, path: str, spec: list[str], _go) -> list[str]:
    if not spec or spec[0] not in ("crate", "self", "super"):
        return []  # another crate
    directory, name = posixpath.split(path)
    module_dir = directory if name in ("mod.rs", "lib.rs", "main.rs") else posixpath.join(directory, name[:-3])
    if spec[0] == "crate":
        base = directory
        while base and not index.first([posixpath.join(base, "lib.rs"), posixpath.join(base, "main.rs")]):
            base = posixpath.dirname(base)
    else:
        base = module_dir
    rest = spec[1:]
    while rest and rest[0] == "super":
        base, rest = posixpath.dirname(base), rest[1:]
    if spec[0] == "super":
        base = posixpath.dirname(base)
    for n in range(len(rest), 0, -1):  # the longest prefix that is a module file
        stem = posixpath.join(base, *rest[:n])
        found = index.first([stem + ".rs", stem + "/mod.rs"])
        if found:
            return found
    return []


def _java_specifiers(root: Node) -> Iterator[str]:
    for node in _nodes(root, frozenset({"import_declaration"})):
        if not any(c.type == "asterisk" for c in node.named_children):
            yield next((_text(c) for c in node.named_children if c.type in ("scoped_identifier", "identifier")), "")


def _java_resolve(index: _PathIndex, path: str, spec: str, _go) -> list[str]:
    parts = spec.split(".")
    # a static import names a member after the class: try the longest prefix first
    return index.by_suffix(["/".join(parts[:n]) + ".java" for n in range(len(parts), 1, -1)])


_SPECIFIERS = {"python": _python_specifiers, "javascript": _js_specifiers, "typescript": _js_specifiers,
               "tsx": _js_specifiers, "go": _go_specifiers, "rust": _rust_specifiers, "java": _java_specifiers}
_RESOLVERS = {"python": _python_resolve, "javascript": _js_resolve, "typescript": _js_resolve, "tsx": _js_resolve,
              "go": _go_resolve, "rust": _rust_resolve, "java": _java_resolve}
