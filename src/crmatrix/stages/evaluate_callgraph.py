"""evaluate_callgraph: one call-graph edge dataset against one system's callers/callees answers."""

from __future__ import annotations

from pathlib import Path

from crmatrix import atomic
from crmatrix.config.settings import JobSpec
from crmatrix.datasets.tasks import read_tasks
from crmatrix.evaluation import callgraph
from crmatrix.evaluation.cell import job_name, named_errors
from crmatrix.symbols import read_symbols
from crmatrix.systems.registry import SystemContext, make_system


def run(*, tasks: Path, symbols: Path, manifest: Path, tree: Path, graph: Path | None, out: Path, dataset: str,
        system: str, system_conf: dict, env: dict, knobs: dict | None = None) -> dict:
    """`knobs`: the arm's knobs as the plan parsed them (a `KnobSpec`; None: read from `env`)."""
    spec = JobSpec.of(system_conf, env, knobs, f"systems.{system}")
    with named_errors(job_name(spec.system.type, system, dataset)):  # its one-line error names both
        return _run(tasks, symbols, manifest, tree, graph, out, dataset, system, spec, env)


def _run(tasks: Path, symbols: Path, manifest: Path, tree: Path, graph: Path | None, out: Path, dataset: str,
         system: str, spec: JobSpec, env: dict) -> dict:
    syms = read_symbols(symbols)
    man = atomic.read_json(manifest)
    ctx = SystemContext(Path(tree), man, syms, env, spec.system.options, graph_file=Path(graph) if graph else None,
                        knobs=spec.knobs)
    # call-graph answers need no search index, so the system is built without one
    result = callgraph.evaluate(make_system(spec.system, ctx), read_tasks(tasks))
    run = {"dataset": dataset, "system": system, "corpus": man["corpus"], "result": result}
    atomic.write_json(Path(out), run)
    return run
