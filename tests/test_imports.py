"""The library is layered: no module imports, at its top level, one that imports it back."""

import ast

from crmatrix.pipeline import codehash


def module_name(path) -> tuple[str, bool]:
    parts = list(path.relative_to(codehash.ROOT.parent).with_suffix("").parts)
    is_package = parts[-1] == "__init__"
    return ".".join(parts[:-1] if is_package else parts), is_package


def names_from(node, package: str) -> bool:
    """Whether an import statement takes names (not submodules) out of `package`'s __init__."""
    if isinstance(node, ast.Import):
        return any(a.name == package for a in node.names)
    return node.module == package and any(codehash.module_file(f"{package}.{a.name}") is None for a in node.names)


def top_level_imports() -> dict[str, set[str]]:
    """Module -> the crmatrix modules its top-level statements import (`imported_modules` of each
    statement; not those inside functions, which run when called).

    Python runs a package's __init__ before any of its modules, so a module of the package
    importing a sibling depends on the package only when it takes names out of it: only then
    is the package an edge (else every package whose __init__ imports one of its modules
    would count as a cycle)."""
    graph = {}
    for path in sorted(codehash.ROOT.rglob("*.py")):
        name, is_package = module_name(path)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        edges = set()
        for node in tree.body:
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            found = codehash.imported_modules(ast.unparse(node), name, is_package)
            parents = {p for p in found if name.startswith(p + ".") and not names_from(node, p)}
            edges |= found - parents - {name}
        graph[name] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycle_in_the_library():
    graph = top_level_imports()
    assert {"crmatrix.config.resolve", "crmatrix.config.plan", "crmatrix.datasets.registry"} <= set(graph)
    assert cycles(graph) == []


def test_the_walk_sees_a_cycle_and_a_package_taking_names_from_its_module():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    graph = top_level_imports()
    # the resolver makes the Matrix its plan reads; neither the Matrix nor the plan asks the resolver
    assert "crmatrix.config.matrix" in graph["crmatrix.config.resolve"]
    assert "crmatrix.config.matrix" in graph["crmatrix.config.plan"]
    assert "crmatrix.config.resolve" not in graph["crmatrix.config.matrix"] | graph["crmatrix.config.plan"]
    # systems.base (the contract) imports systems.guard, which imports systems.answers: no edge back
    assert "crmatrix.systems.guard" in graph["crmatrix.systems.base"]
    assert "crmatrix.systems.registry" not in graph["crmatrix.systems.base"]
    assert "crmatrix.systems" not in graph["crmatrix.systems.guard"]
    # but a system type takes `register` out of the registry: an edge
    assert "crmatrix.systems.registry" in graph["crmatrix.systems.command"]
