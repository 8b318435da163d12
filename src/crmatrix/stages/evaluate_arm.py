"""evaluate_arm: one dataset against one system under one arm, every method scored, as a run JSON."""

from __future__ import annotations

import logging
from pathlib import Path

from crmatrix import TERMINAL, atomic, trackers
from crmatrix.datasets import ledger
from crmatrix.datasets.tasks import read_tasks
from crmatrix.evaluation import evaluate, provenance, tokenbench, trec
from crmatrix.results.run import MethodResult, Provenance, Run
from crmatrix.symbols import read_symbols
from crmatrix.systems.external import models_by_name
from crmatrix.systems.guard import DEFAULT_BUDGET_S, DEFAULT_TIMEOUT_S, Guard
from crmatrix.systems.registry import SystemContext


def run(*, tasks: Path, symbols: Path, manifest: Path, tree: Path, dataset_file: Path, out: Path,
        dataset: str, system: str, system_conf: dict, arm: str, env: dict, top_k: int,
        index: Path | None = None, model: Path | None = None, cache_dir: Path | None = None,
        threads: int | None = None, trec_dir: Path | None = None, home_dir: Path | None = None,
        graph: Path | None = None, venv: Path | None = None, split: dict | None = None,
        grep: Path | None = None, query_vectors: Path | None = None, system_models: list[Path] | None = None,
        tracking: Path | None = None) -> Run:
    """The files and parameters are what `crmatrix.pipeline.experiment.cell` plans for the cell.
    `home_dir`: an external system's own HOME (the workflow's results/home/{system}); None
    gives it a temporary one for this job. `graph`: the corpus's reference graph, for arms
    that expand along it. `query_vectors`: the dataset's queries embedded with the arm's
    model (stages.embed_queries; None: the builtin embeds them here). `venv`: the environment
    the system's `install` made. `split`: which of the file's tasks `tasks` holds ({split, seed},
    experiment.dataset_split; None: all); on a test split the ledger must not hold the config
    yet (crmatrix.datasets.ledger). `grep`: the dataset's grep-and-read baseline
    (stages.grep_baseline; None: grep here). `system_models`: the prepared model directories
    (results/models/NAME) an external system's `{model:NAME}` placeholders name. `tracking`:
    where the run's JSONL event log goes (crmatrix.trackers.event_log; None: none)."""
    split = split or {"split": "all", "seed": None}
    syms = read_symbols(symbols)
    man = atomic.read_json(manifest)
    task_list = read_tasks(tasks)
    grep_runs = atomic.read_json(Path(grep)) if grep else tokenbench.grep_and_read(Path(tree), man, task_list, syms)
    guard = Guard(system_conf.get("timeout_s", DEFAULT_TIMEOUT_S), system_conf.get("budget_s", DEFAULT_BUDGET_S))
    ctx = SystemContext(Path(tree), man, syms, env, system_conf.get("options", {}),
                        index_dir=Path(index) if index else None, cache_dir=Path(cache_dir) if cache_dir else None,
                        threads=threads, model_dir=Path(model) if model else None,
                        query_vectors=Path(query_vectors) if query_vectors else None,
                        graph_file=Path(graph) if graph else None,
                        home_dir=Path(home_dir) if home_dir else None, venv_dir=Path(venv) if venv else None,
                        system_models=models_by_name(system_models),
                        timeout_s=guard.timeout_s, name=system, methods=tuple(system_conf["methods"]))
    sysobj = evaluate.start_system(system_conf, ctx, guard)
    try:
        if ledger.is_test(split["split"]):  # refused before any query is spent on it
            model = (sysobj.provenance() if hasattr(sysobj, "provenance") else {}).get("model")
            key = ledger.config_key(atomic.sha256_file(Path(dataset_file)), split["split"], system_conf, env, model)
            ledger.check(key, dataset, split["split"], ledger.forced())
        methods, ranked, prepare_s = evaluate.evaluate(sysobj, task_list, syms, system_conf["methods"], top_k,
                                                       guard, grep_runs)
        system_run = (sysobj.provenance() if hasattr(sysobj, "provenance") else None) or None
    finally:
        evaluate.stop_system(sysobj, guard)
    line, warnings = evaluate.outcome_lines(f"run {dataset}/{system}/{arm}", methods, system_conf["methods"])
    told = logging.getLogger(TERMINAL)
    told.log(logging.WARNING if any(m["errors"] for m in methods.values()) else logging.INFO, line)
    for warning in warnings:
        told.warning(warning)
    params = {"dataset": dataset, "system": system_conf, "arm": arm, "env": env, "top_k": top_k}
    prov = provenance.record(corpus=man["corpus"], manifest=man, dataset=dataset, dataset_file=Path(dataset_file),
                             split=split, system=system, system_conf=system_conf, arm=arm, env=env, params=params,
                             system_run=system_run, install=provenance.installed(venv))
    where = f"run {dataset}/{system}/{arm}"
    result = Run(dataset=dataset, system=system, arm=arm, top_k=top_k, prepare_s=prepare_s,
                 methods={m: MethodResult.from_json(r, f"{where}: methods.{m}") for m, r in sorted(methods.items())},
                 provenance=Provenance.from_json(prov, f"{where}: provenance"))
    if trec_dir is not None:
        with atomic.staged_dir(Path(trec_dir)) as d:
            for method, by_task in ranked.items():
                trec.write_run(d / f"{method}.run", by_task, f"{system}.{arm}.{method}")
    result.write(Path(out))
    if tracking is not None:
        trackers.event_log(Path(out), Path(trec_dir) if trec_dir is not None else None, Path(tracking))
    return result
