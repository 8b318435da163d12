"""An API documentation page, named as devdocs names it, mapped to the definition it documents
in a library's Python source: DS-1000's gold docs against the libraries themselves.

A title (`pandas.reference.api.pandas.dataframe.where`,
`numpy.reference.generated.numpy.argmax`, `matplotlib._as_gen.matplotlib.pyplot.subplots`,
`sklearn.modules.generated.sklearn.svm.svr#sklearn.svm.SVR.fit`) names an object by its
public dotted path: the anchor after `#` when there is one (it keeps the case), else what
follows the documentation section in front (from the first part, after the first, that is a
top-level package of the tree). Devdocs lowercases the rest, so every part is matched
case-insensitively; where several names of a scope differ only in case (`pyplot.figure`, the
function, and `pyplot.Figure`, the class), the one spelled as the title is taken.

The dotted path is followed the way Python's attribute lookup would, read statically (`ast`)
from the tree: a package's submodules; a module's own classes and functions; the names it
imports (`from .fromnumeric import argmax`, `import x as y`, a plain `a = b` alias), and the
public names of what it star-imports (`from .core import *`: `numpy.argmax` is defined in
`numpy/core/fromnumeric.py`); a class's methods and nested classes, then its bases' in order
(`DataFrame.where` is found on `DataFrame`, `Figure.add_axes` on `FigureBase`). A module's
last binding of a name wins over earlier ones and explicit bindings over star imports, as at
import time (ignoring which branch of an `if` or `try` runs).

What cannot be followed is a drop with its reason (`Unresolved`): a title of another
library, a name with no definition in the Python source (a C or Cython function such as
`numpy.sin`, a constant, an accessor attribute), or a name whose candidates differ only in
case and resolve to different definitions.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

# Why a title maps to no definition (the drop reasons the loader counts).
OTHER_LIBRARY = "title of a library not in the corpus"
NO_DEFINITION = "no definition in the Python source"
AMBIGUOUS = "ambiguous title"

# Bases and star-import chains deeper than this are a cycle the visited set did not catch.
_MAX_DEPTH = 64


class Unresolved(Exception):
    """A title that names no single definition: `reason` (one of the constants above), `detail`."""

    def __init__(self, reason: str, detail: str):
        super().__init__(reason, detail)
        self.reason, self.detail = reason, detail


@dataclass(frozen=True)
class Definition:
    """A class or function of the tree: its file and its qualified name within the module."""

    path: str
    qualname: str

    @property
    def name(self) -> str:
        return self.qualname.rsplit(".", 1)[-1]

    @property
    def parent(self) -> str:
        """The enclosing class's name ('' for a module-level one), as the symbol extractor records it."""
        parts = self.qualname.split(".")
        return parts[-2] if len(parts) > 1 else ""


@dataclass
class _Module:
    name: str
    path: str
    is_package: bool
    # name -> its last binding: ("def", ast node) | ("from", module, attr) | ("import", module) | ("alias", name)
    bindings: dict[str, tuple] = field(default_factory=dict)
    stars: list[str] = field(default_factory=list)  # star-imported modules, in order


def dotted_name(title: str, packages: set[str]) -> list[str] | None:
    """The public dotted path a devdocs title names, as parts; None when no part after the
    first (nor the anchor's first) is one of `packages` (the tree's top-level packages)."""
    page, _, anchor = title.partition("#")
    if anchor:
        parts = anchor.split(".")
        return parts if parts[0].lower() in packages else None
    parts = page.split(".")
    for i in range(1, len(parts)):
        if parts[i].lower() in packages:
            return parts[i:]
    return None


def _statements(body: list[ast.stmt]):
    """A module's top-level statements in order, looking into `if`/`try`/`with` blocks (not
    into definitions): the bindings import time may make."""
    for node in body:
        if isinstance(node, (ast.If, ast.For, ast.While)):
            yield from _statements(node.body)
            yield from _statements(node.orelse)
        elif isinstance(node, ast.Try | ast.TryStar):
            yield from _statements(node.body)
            for h in node.handlers:
                yield from _statements(h.body)
            yield from _statements(node.orelse)
            yield from _statements(node.finalbody)
        elif isinstance(node, ast.With):
            yield from _statements(node.body)
        else:
            yield node


def _absolute(module: _Module, level: int, name: str | None) -> str:
    """The absolute module of a relative import `from ..x import y` in `module`."""
    if level == 0:
        return name or ""
    base = module.name.split(".")
    if not module.is_package:
        base = base[:-1]
    base = base[: len(base) - (level - 1)] if level > 1 else base
    return ".".join([*base, *([name] if name else [])])


class Library:
    """The Python modules of a tree (corpus-relative paths of `.py` files), parsed on demand."""

    def __init__(self, root: Path, paths: list[str]):
        self.root = Path(root)
        self.files: dict[str, tuple[str, bool]] = {}  # module name -> (path, is a package)
        py = [p for p in paths if p.endswith(".py")]
        packages = {str(PurePosixPath(p).parent) for p in py if PurePosixPath(p).name == "__init__.py"}
        for p in sorted(py):
            pp = PurePosixPath(p)
            is_package = pp.name == "__init__.py"
            parts = [] if is_package else [pp.stem]
            d = pp.parent
            while str(d) in packages:
                parts.insert(0, d.name)
                d = d.parent
            if not parts or not (is_package or str(pp.parent) in packages):
                continue  # a script beside the packages, not an importable module
            self.files.setdefault(".".join(parts), (p, is_package))
            if d.name.isidentifier():  # a namespace package (no __init__.py) above: mpl_toolkits
                self.files.setdefault(".".join([d.name, *parts]), (p, is_package))
        self.packages = {m.split(".", 1)[0] for m in self.files}
        self._modules: dict[str, _Module | None] = {}

    # --- reading modules ------------------------------------------------------------------

    def module(self, name: str) -> _Module | None:
        if name not in self._modules:
            self._modules[name] = self._parse(name) if name in self.files else None
        return self._modules[name]

    def _parse(self, name: str) -> _Module:
        path, is_package = self.files[name]
        m = _Module(name, path, is_package)
        try:
            tree = ast.parse((self.root / path).read_bytes(), filename=path)
        except (SyntaxError, ValueError, OSError):
            return m  # a file Python cannot parse defines nothing we could follow
        for node in _statements(tree.body):
            if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                m.bindings[node.name] = ("def", node)
            elif isinstance(node, ast.ImportFrom):
                source = _absolute(m, node.level, node.module)
                for a in node.names:
                    if a.name == "*":
                        m.stars.append(source)
                    else:
                        m.bindings[a.asname or a.name] = ("from", source, a.name)
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.asname:
                        m.bindings[a.asname] = ("import", a.name)
            elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Name):
                for t in node.targets:
                    if isinstance(t, ast.Name):
                        m.bindings[t.id] = ("alias", node.value.id)
        return m

    # --- following a dotted path ----------------------------------------------------------

    def resolve(self, title: str) -> Definition:
        """The one definition `title` documents, else `Unresolved` with the reason."""
        parts = dotted_name(title, self.packages)
        if parts is None:
            raise Unresolved(OTHER_LIBRARY, title)
        target: object = ("module", parts[0].lower())
        for i, part in enumerate(parts[1:], start=1):
            target = self._member(target, part, title)
            if target is None:
                raise Unresolved(NO_DEFINITION, f"{title}: {'.'.join(parts[: i + 1])} is not defined in Python")
        if not isinstance(target, Definition):
            raise Unresolved(NO_DEFINITION, f"{title}: names a module, not a definition")
        return target

    def _member(self, target, part: str, title: str):
        """`target.part`, case-insensitively, the title's spelling first among several."""
        if isinstance(target, Definition):
            found = self._class_members(target, part)
        else:
            found = self._module_members(target[1], part)
        resolved = {}
        for spelled, how in found:
            got = how()
            if got is not None:
                resolved.setdefault(got, set()).add(spelled)
        if len(resolved) > 1:
            exact = [t for t, names in resolved.items() if part in names]
            if len(exact) != 1:
                listed = ", ".join(sorted(str(t) for t in resolved))
                raise Unresolved(AMBIGUOUS, f"{title}: {part} is any of {listed}")
            return exact[0]
        return next(iter(resolved), None)

    def _module_members(self, module: str, part: str) -> list[tuple[str, object]]:
        """(spelling, thunk resolving it) for every name of `module` equal to `part` but for case."""
        key = part.lower()
        out = [(n.rsplit(".", 1)[1], lambda n=n: ("module", n))
               for n in self.files if n.startswith(module + ".") and n.count(".") == module.count(".") + 1
               and n.rsplit(".", 1)[1].lower() == key]
        m = self.module(module)
        if m is None:
            return out
        names = {n for n in m.bindings if n.lower() == key} | self._star_names(m, key, set())
        return out + [(n, lambda n=n: self._lookup(module, n, set(), 0)) for n in sorted(names)]

    def _star_names(self, m: _Module, key: str, seen: set[str]) -> set[str]:
        """The public names equal to `key` but for case that `m`'s star imports bring in."""
        out = set()
        for s in m.stars:
            if s in seen:
                continue
            seen.add(s)
            sm = self.module(s)
            if sm is not None:
                out |= {n for n in sm.bindings if n.lower() == key and not n.startswith("_")}
                out |= self._star_names(sm, key, seen)
        return out

    def _lookup(self, module: str, name: str, seen: set, depth: int):
        """What `module.name` is bound to (a Definition or ("module", name)); None: not in Python."""
        if (module, name) in seen or depth > _MAX_DEPTH:
            return None
        seen.add((module, name))
        m = self.module(module)
        if m is not None and name in m.bindings:
            return self._binding(m, m.bindings[name], seen, depth)
        if m is not None:
            for s in reversed(m.stars):  # the last star import of a name wins
                got = self._lookup(s, name, seen, depth + 1) if not name.startswith("_") else None
                if got is not None:
                    return got
        sub = f"{module}.{name}"
        return ("module", sub) if sub in self.files else None

    def _binding(self, m: _Module, b: tuple, seen: set, depth: int):
        kind = b[0]
        if kind == "def":
            return Definition(m.path, b[1].name)
        if kind == "from":
            return self._lookup(b[1], b[2], seen, depth + 1)
        if kind == "import":
            return ("module", b[1]) if b[1] in self.files else None
        return self._lookup(m.name, b[1], seen, depth + 1)  # alias

    # --- classes --------------------------------------------------------------------------

    def _class_node(self, d: Definition) -> tuple[_Module, ast.ClassDef] | None:
        """The ClassDef of a definition (None when it is a function)."""
        mod = next((self.module(n) for n, (p, _) in self.files.items() if p == d.path), None)
        if mod is None:
            return None
        names = d.qualname.split(".")
        b = mod.bindings.get(names[0])
        node = b[1] if b and b[0] == "def" else None
        for n in names[1:]:
            node = next((c for c in getattr(node, "body", []) if isinstance(c, ast.ClassDef) and c.name == n), None)
        return (mod, node) if isinstance(node, ast.ClassDef) else None

    def _class_members(self, d: Definition, part: str) -> list[tuple[str, object]]:
        """Members of class `d` equal to `part` but for case: its own, else its bases' (in order)."""
        key = part.lower()
        for cls in self._mro(d):
            mod, node = self._class_node(cls)
            own = [c.name for c in node.body if isinstance(c, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
                   and c.name.lower() == key]
            if own:
                return [(n, lambda n=n, cls=cls: Definition(cls.path, f"{cls.qualname}.{n}")) for n in sorted(set(own))]
        return []

    def _mro(self, d: Definition) -> list[Definition]:
        """`d` and its bases, depth first, left to right, each once (classes only)."""
        out, stack = [], [d]
        while stack and len(out) < _MAX_DEPTH:
            c = stack.pop(0)
            found = self._class_node(c) if isinstance(c, Definition) else None
            if found is None or c in out:
                continue
            out.append(c)
            mod, node = found
            stack = [b for b in (self._base(mod, e) for e in node.bases) if b is not None] + stack
        return out

    def _base(self, mod: _Module, expr: ast.expr) -> Definition | None:
        """The class a base expression names, in its module (`Generic[T]` is `Generic`)."""
        if isinstance(expr, ast.Subscript):
            expr = expr.value
        chain = []
        while isinstance(expr, ast.Attribute):
            chain.insert(0, expr.attr)
            expr = expr.value
        if not isinstance(expr, ast.Name):
            return None
        target = self._lookup(mod.name, expr.id, set(), 0)
        for a in chain:
            if isinstance(target, tuple):
                target = self._lookup(target[1], a, set(), 0)
            else:
                return None
        return target if isinstance(target, Definition) else None
