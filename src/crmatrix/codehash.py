"""The library code a workflow stage runs, found from its imports and hashed by content.

Snakemake's own code trigger sees a rule's thin script, not the library behind it. The
modules a script imports, followed transitively through `crmatrix` (imports inside
functions too, and the package `__init__`s every import runs), are exactly the code that
can change its result; a hand-kept list drifts as soon as a module gains an import.

Parsing every module is most of the cost, paid on every planning (and by each job a cluster
starts, which reads the Snakefile again): given a memo file, the imports of a module are kept
there by a hash of its text, so only an edited module is parsed again.
"""

from __future__ import annotations

import ast
import functools
import hashlib
from pathlib import Path

from crmatrix import CrmatrixError, atomic

PACKAGE = "crmatrix"
ROOT = Path(__file__).resolve().parent  # the crmatrix package


def module_file(name: str) -> Path | None:
    """The source file of `crmatrix...` module `name`, None for anything else (an attribute,
    a third-party module)."""
    parts = name.split(".")
    if parts[0] != PACKAGE:
        return None
    base = ROOT.joinpath(*parts[1:])
    for candidate in (base / "__init__.py", base.with_suffix(".py")):
        if candidate.is_file():
            return candidate
    return None


def _executed(tree: ast.AST):
    """Every node of `tree` but those under `if TYPE_CHECKING:`, which never runs: the names a
    module imports for its annotations alone are no code a stage runs."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            todo.extend(node.orelse)
        else:
            todo.extend(ast.iter_child_nodes(node))


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


@functools.cache  # the Snakefile asks for each rule; many share modules
def import_names(source: str, module: str | None = None, is_package: bool = False) -> frozenset[str]:
    """Every dotted name that running `source` (the text of `module`, if it is one) may import,
    with its parents (importing a.b.c runs a/__init__ and a/b/__init__ too): modules, or
    attributes of them, which only the tree tells apart (`imported_modules`)."""
    names: set[str] = set()
    for node in _executed(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: resolved against the importing module's package
                pkg = (module or PACKAGE).split(".")
                pkg = pkg if is_package else pkg[:-1]
                pkg = pkg[:len(pkg) - (node.level - 1)]
                base = ".".join(pkg + ([base] if base else []))
            names.add(base)
            names.update(f"{base}.{a.name}" for a in node.names)  # submodules; attributes drop out below
    return frozenset(".".join(parts[:i]) for parts in (n.split(".") for n in names) for i in range(1, len(parts) + 1))


def imported_modules(source: str, module: str | None = None, is_package: bool = False,
                     names: frozenset[str] | None = None, find=module_file) -> frozenset[str]:
    """The crmatrix modules that running `source` (the text of `module`, if it is one) imports
    (`names`: its `import_names`, if known; `find`: `module_file`, or a memo of it)."""
    if names is None:
        names = import_names(source, module, is_package)
    return frozenset(n for n in names if find(n) is not None)


class Memo:
    """The import names of each module text met (`import_names`), by a hash of (module name,
    package or not, text): a pure function of its key, so a stored entry is never stale. `path`
    (None: none) is read once; `save` writes the entries met since, when one of them was new (so
    the file holds the texts of today). For its own life, one planning, a memo also keeps what it
    found in the tree — each module's file, text and imports, and which names are modules — as
    the Snakefile asks for every rule's closure, and the closures share most modules."""

    def __init__(self, path: Path | None = None):
        self.path, self.met, self.added = (Path(path) if path is not None else None), {}, False
        self._modules: dict[str, tuple[Path, str, frozenset[str]]] = {}
        self._files: dict[str, Path | None] = {}  # module_file's answers
        try:
            stored = atomic.read_json(self.path) if self.path is not None else {}
        except (OSError, CrmatrixError):  # none yet, or unreadable: parse everything again
            stored = {}
        self.stored = {k: v for k, v in stored.items() if isinstance(v, list)} if isinstance(stored, dict) else {}

    def imports(self, source: str, module: str | None = None, is_package: bool = False) -> frozenset[str]:
        key = hashlib.sha256(f"{module}\0{is_package}\0{source}".encode()).hexdigest()
        if key not in self.stored:
            self.stored[key], self.added = sorted(import_names(source, module, is_package)), True
        self.met[key] = self.stored[key]
        return imported_modules(source, names=frozenset(self.met[key]), find=self._file)

    def _file(self, name: str) -> Path | None:
        if name not in self._files:
            self._files[name] = module_file(name)
        return self._files[name]

    def module(self, name: str) -> tuple[Path, str, frozenset[str]]:
        """The crmatrix module's file, text and the crmatrix modules it imports."""
        found = self._modules.get(name)
        if found is None:
            path = self._file(name)
            text = path.read_text(encoding="utf-8")
            found = self._modules[name] = (path, text, self.imports(text, name, path.name == "__init__.py"))
        return found

    def save(self) -> None:
        if self.added and self.path is not None:
            atomic.write_json(self.path, self.met)
            self.added = False


def closure(script: Path, memo: Memo | None = None) -> dict[Path, str]:
    """Every crmatrix source file that running `script` may execute, sorted, with its text."""
    memo = memo if memo is not None else Memo()
    return _closure(list(memo.imports(Path(script).read_text(encoding="utf-8"))), memo)


def _closure(todo: list[str], memo: Memo) -> dict[Path, str]:
    """The crmatrix modules `todo` names and every one they import, transitively: file -> text, sorted."""
    seen: dict[str, tuple[Path, str]] = {}
    while todo:
        name = todo.pop()
        if name not in seen:
            path, text, imports = memo.module(name)
            seen[name] = path, text
            todo.extend(imports)
    return dict(sorted(seen.values()))


def _hash(files: dict[Path, str]) -> str:
    # paths relative to the package, so a moved checkout keeps its hashes
    return atomic.hash_obj([[p.relative_to(ROOT).as_posix(), text] for p, text in files.items()])[:16]


def stage_hash(script: Path, memo: Memo | None = None) -> str:
    """A hash of the library code `script` runs; `memo` spares parsing the modules it has met."""
    return _hash(closure(script, memo))


def module_hash(name: str) -> str:
    """A hash of crmatrix module `name` and the library code it imports (what a cache of its
    results depends on, as a stage's outputs on `stage_hash`)."""
    return _hash(_closure([name], Memo()))
