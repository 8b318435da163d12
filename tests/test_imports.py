"""The library is layered: no module imports, at its top level, one that imports it back; and a
job loads only what its stage runs."""

import ast
import json
import os
import subprocess
import sys

import pytest
from test_systems import CORPUS, DATASET

from crmatrix import codehash, config
from crmatrix.stages import extract_symbols, fetch_corpus, prepare_dataset


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


# What a job of these stages must not load, at import nor while it runs (issue 48, "jobs that
# start light"): no chart, no matrix assembly, no model runtime, no tracker it was not told of.
NEVER = ("torch", "onnxruntime", "transformers", "altair", "pandas", "scipy", "mlflow", "tiktoken", "bm25s",
         "crmatrix.plots", "crmatrix.analysis.matrix")
# a builtin cell's evaluation: the engine, but no external system's code and no MLflow tracker
EVALUATION_NOT = (*NEVER, "crmatrix.trackers.mlflow", "crmatrix.systems.external", "crmatrix.systems.command",
                  "crmatrix.systems.mcp", "crmatrix.systems.fastcodeembed", "crmatrix.analysis")
# a cell's statistics: two runs read, numpy's bootstrap; no engine, system, model or tracker
CELL_NOT = (*NEVER, "crmatrix.engine", "crmatrix.embed", "crmatrix.systems", "crmatrix.trackers", "crmatrix.symbols")
JOB = """
import json, sys
job = json.loads(sys.argv[1])
if job["stage"] == "evaluate_arm":
    from crmatrix.evaluation.cell import CellJob
    from crmatrix.stages import evaluate_arm
    evaluate_arm.run(CellJob(**job["cell"]), tracking=job["tracking"])
else:
    from crmatrix.stages import cell_stats
    cell_stats.run(job["run"], job["base"], "lexical", None, job["out"])
print(json.dumps(sorted(sys.modules)))
"""


def loaded_by(job: dict, forbidden: tuple[str, ...]) -> list[str]:
    """The forbidden modules (or their submodules) a fresh interpreter running `job` loaded."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(codehash.ROOT.parent), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", JOB, json.dumps(job)], capture_output=True, text=True, env=env,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    modules = json.loads(proc.stdout.splitlines()[-1])
    return sorted(m for m in modules if any(m == f or m.startswith(f + ".") for f in forbidden))


def test_an_evaluation_and_its_cell_load_only_what_they_run(tmp_path):
    for rel, text in CORPUS.items():
        (tmp_path / "src" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "src" / rel).write_text(text)
    (tmp_path / "ds.json").write_text(json.dumps(DATASET))
    fetch_corpus.run("c", {"path": str(tmp_path / "src"), "include": ["**"], "exclude": []}, tmp_path / "tree",
                     tmp_path / "manifest.json", [], {})
    extract_symbols.run(tmp_path / "tree", tmp_path / "manifest.json", tmp_path / "symbols.jsonl")
    prepare_dataset.run(tmp_path / "ds.json", "codelens", "c", tmp_path / "manifest.json",
                        tmp_path / "symbols.jsonl", tmp_path / "tasks.jsonl")
    inputs = {k: str(tmp_path / f) for k, f in {"tasks": "tasks.jsonl", "symbols": "symbols.jsonl", "tree": "tree",
                                                 "manifest": "manifest.json", "dataset_file": "ds.json"}.items()}
    matrix = config.from_dict({"corpora": {"c": {"path": "."}}, "datasets": {"d": {"file": "d.json", "corpus": "c"}},
                               "arms": {"baseline": {}},
                               "systems": {"builtin": {"type": "builtin", "methods": ["lexical"]}}})
    conf = matrix.systems["builtin"].conf
    for arm in ("baseline", "other"):
        cell = {"dataset": "d", "system": "builtin", "arm": arm, "inputs": inputs,
                "params": {"system_conf": conf, "env": {}, "top_k": 10},
                "outputs": {"run": str(tmp_path / f"{arm}.json"), "trec_dir": str(tmp_path / f"trec-{arm}")}}
        job = {"stage": "evaluate_arm", "cell": cell, "tracking": str(tmp_path / f"{arm}.jsonl")}
        assert loaded_by(job, EVALUATION_NOT) == [], arm
    assert (tmp_path / "other.jsonl").read_text().count("\n") > 3  # the event log was written, by the jsonl tracker
    job = {"stage": "cell_stats", "run": str(tmp_path / "other.json"), "base": str(tmp_path / "baseline.json"),
           "out": str(tmp_path / "cell.json")}
    assert loaded_by(job, CELL_NOT) == []
    cell = json.loads((tmp_path / "cell.json").read_text())
    assert (cell["baseline"], cell["cell"]["improved"], cell["cell"]["regressed"]) == ("baseline", 0, 0)  # same answers


def test_the_check_sees_a_forbidden_module_and_its_submodules(tmp_path):
    job = {"stage": "cell_stats", "run": str(tmp_path / "none.json"), "base": None, "out": str(tmp_path / "c.json")}
    with pytest.raises(AssertionError, match="none.json"):  # a job that fails is no pass
        loaded_by(job, NEVER)
