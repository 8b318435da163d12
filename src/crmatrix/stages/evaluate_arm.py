"""evaluate_arm: one dataset against one system under one arm, every method scored, as a run JSON."""

from __future__ import annotations

from pathlib import Path

from crmatrix import atomic, evaluate, provenance, trec
from crmatrix.datasets import read_tasks
from crmatrix.symbols import read_symbols
from crmatrix.systems import SystemContext, make_system


def run(*, tasks: Path, symbols: Path, manifest: Path, tree: Path, dataset_file: Path, out: Path,
        dataset: str, system: str, system_conf: dict, arm: str, env: dict, top_k: int,
        index: Path | None = None, model: Path | None = None, cache_dir: Path | None = None,
        threads: int | None = None, trec_dir: Path | None = None, graph: Path | None = None) -> dict:
    syms = read_symbols(symbols)
    man = atomic.read_json(manifest)
    ctx = SystemContext(Path(tree), man, syms, env, system_conf.get("options", {}),
                        Path(index) if index else None, Path(cache_dir) if cache_dir else None, threads,
                        Path(model) if model else None, Path(graph) if graph else None)
    sysobj = make_system(system_conf, ctx)
    params = {"dataset": dataset, "system": system_conf, "arm": arm, "env": env, "top_k": top_k}
    methods, ranked, prepare_s = evaluate.evaluate(sysobj, read_tasks(tasks), syms, system_conf["methods"], top_k)
    prov = provenance.record(corpus=man["corpus"], manifest=man, dataset=dataset, dataset_file=Path(dataset_file),
                             system=system, system_conf=system_conf, arm=arm, env=env, params=params,
                             system_run=sysobj.provenance() if hasattr(sysobj, "provenance") else None)
    result = {"dataset": dataset, "system": system, "arm": arm, "top_k": top_k, "prepare_s": prepare_s,
              "methods": methods, "provenance": prov}
    if trec_dir is not None:
        with atomic.staged_dir(Path(trec_dir)) as d:
            for method, by_task in ranked.items():
                trec.write_run(d / f"{method}.run", by_task, f"{system}.{arm}.{method}")
    atomic.write_json(Path(out), result)
    return result
