"""evaluate_arm: one dataset against one system under one arm, every method scored, as a run JSON."""

from __future__ import annotations

import importlib
import logging
from pathlib import Path

from crmatrix import TERMINAL, CrmatrixError, atomic
from crmatrix.config.settings import SystemSpec
from crmatrix.datasets import ledger
from crmatrix.datasets.tasks import read_tasks
from crmatrix.evaluation import evaluate, provenance, tokenbench, tokens, trec
from crmatrix.evaluation.cell import CellJob, named_errors
from crmatrix.results.run import MethodResult, Provenance, Run
from crmatrix.symbols import read_symbols
from crmatrix.systems.guard import Guard
from crmatrix.systems.registry import SystemContext
from crmatrix.versions.repository import MANIFEST as REPOSITORY_MANIFEST


def run(cell: CellJob, *, cache_dir: Path | None = None, threads: int | None = None,
        tracking: Path | None = None) -> Run:
    """The cell as its plan names it (`crmatrix.config.plan.Plan.cell`): its inputs (tasks,
    grep, dataset_file, tree, manifest, symbols; index, model, query_vectors, graph, venv and
    system_models as the system and arm need them), its params (system_conf, env, top_k,
    split, home_dir, dataset_sha256: the dataset file's content as planned) and its outputs (run,
    trec_dir). `home_dir`: an external system's own
    HOME (None gives it a temporary one for this job). `query_vectors`: the dataset's queries
    embedded with the arm's model (stages.embed_queries; absent: the builtin embeds them here).
    `split`: which of the file's tasks `tasks` holds ({split, seed}); on a test split the
    ledger must not hold the config yet (crmatrix.datasets.ledger). `grep`: the dataset's
    grep-and-read baseline (stages.grep_baseline; absent: grep here). `tracking`: where the
    run's JSONL event log goes (crmatrix.trackers.event_log; None: none)."""
    with named_errors(cell.name()):  # its one-line error names the system and the dataset
        return _run(cell, cache_dir, threads, tracking)


# What a builtin cell's job imports once it knows its system and has written its run: a local
# run's warm server (crmatrix.pipeline.warm) imports them once for all its jobs (`warm`).
BUILTIN_MODULES = ("crmatrix.systems.builtin", "crmatrix.versions.engines", "crmatrix.engine.index",
                   "crmatrix.embed.queries", "crmatrix.graph", "crmatrix.trackers.jsonl")


def warm() -> None:
    """Load what most of a run's cells load, once, for a warm server to fork from: the builtin
    system's modules, and the token table each answer is counted with."""
    for name in BUILTIN_MODULES:
        importlib.import_module(name)
    tokens.warm()


def _system_models(model_dirs) -> dict[str, Path]:
    """The models an external system was handed, by name: their module (the external systems')
    imported only then, so a builtin cell's job loads none of their code."""
    if not model_dirs:
        return {}
    from crmatrix.systems.external import models_by_name

    return models_by_name(model_dirs)


def system_guard(spec: SystemSpec) -> Guard:
    """The guard of the system's calls: its `timeout_s` per query, its `budget_s` in all."""
    return Guard(spec.timeout_s, spec.budget_s)


def system_context(cell: CellJob, corpus_dir: Path, manifest: dict, symbols: list, guard: Guard,
                   cache_dir: Path | None, threads: int | None) -> SystemContext:
    """What the cell's system is given: its inputs and params as the plan names them."""
    i, p, spec = cell.inputs, cell.params, cell.spec.system

    def path(key: str) -> Path | None:
        return Path(i[key]) if i.get(key) else None

    return SystemContext(corpus_dir, manifest, symbols, p["env"], spec.options,
                         store_dir=path("store"), index_dir=path("index"),
                         cache_dir=Path(cache_dir) if cache_dir else None, threads=threads, model_dir=path("model"),
                         query_vectors=path("query_vectors"), graph_file=path("graph"),
                         home_dir=Path(p["home_dir"]) if p.get("home_dir") else None, venv_dir=path("venv"),
                         system_models=_system_models(i.get("system_models")),
                         timeout_s=guard.timeout_s, name=cell.system, methods=spec.methods, knobs=cell.spec.knobs)


def _run(cell: CellJob, cache_dir: Path | None, threads: int | None, tracking: Path | None) -> Run:
    i, p = cell.inputs, cell.params
    dataset, system, arm = cell.dataset, cell.system, cell.arm
    spec, system_conf, env, top_k = cell.spec.system, p["system_conf"], p["env"], p["top_k"]
    split = p.get("split") or {"split": "all", "seed": None}
    planned = p.get("dataset_sha256")
    if planned is not None and atomic.sha256_file(Path(i["dataset_file"])) != planned:
        # edited between the plan and this job: the run would not be the one its key names
        raise CrmatrixError(f"{i['dataset_file']}: changed since the run was planned; run again")
    task_list = read_tasks(Path(i["tasks"]))
    if i.get("repository"):  # a repository of many commits: each commit's symbols when the system selects it;
        # no grep-and-read baseline (it would read a tree per commit)
        corpus_dir, syms, grep_runs = Path(i["repository"]), [], None
        man = atomic.read_json(corpus_dir / REPOSITORY_MANIFEST)
    else:
        corpus_dir, syms = Path(i["tree"]), read_symbols(Path(i["symbols"]))
        man = atomic.read_json(Path(i["manifest"]))
        grep_runs = (atomic.read_json(Path(i["grep"])) if i.get("grep")
                     else tokenbench.grep_and_read(corpus_dir, man, task_list, syms))
    guard = system_guard(spec)
    ctx = system_context(cell, corpus_dir, man, syms, guard, cache_dir, threads)
    sysobj = evaluate.start_system(spec, ctx, guard)
    try:
        if ledger.is_test(split["split"]):  # refused before any query is spent on it
            key = ledger.config_key(atomic.sha256_file(Path(i["dataset_file"])), split["split"], system_conf, env,
                                    sysobj.provenance().get("model"))
            ledger.check(key, dataset, split["split"], ledger.forced())
        methods, ranked, prepare_s = evaluate.evaluate(sysobj, task_list, syms, list(spec.methods), top_k,
                                                       guard, grep_runs)
        system_run = sysobj.provenance() or None
    finally:
        evaluate.stop_system(sysobj, guard)
    line, warnings = evaluate.outcome_lines(f"run {dataset}/{system}/{arm}", methods, list(spec.methods))
    told = logging.getLogger(TERMINAL)
    told.log(logging.WARNING if any(m["errors"] for m in methods.values()) else logging.INFO, line)
    for warning in warnings:
        told.warning(warning)
    params = {"dataset": dataset, "system": system_conf, "arm": arm, "env": env, "top_k": top_k}
    prov = provenance.record(corpus=man["corpus"], manifest=man, dataset=dataset,
                             dataset_file=Path(i["dataset_file"]), split=split, system=system,
                             system_conf=system_conf, arm=arm, env=env, params=params, system_run=system_run,
                             install=provenance.installed(ctx.venv_dir))
    where = f"run {dataset}/{system}/{arm}"
    result = Run(dataset=dataset, system=system, arm=arm, top_k=top_k, prepare_s=prepare_s,
                 methods={m: MethodResult.from_json(r, f"{where}: methods.{m}") for m, r in sorted(methods.items())},
                 provenance=Provenance.from_json(prov, f"{where}: provenance"))
    out, trec_dir = Path(cell.outputs["run"]), cell.outputs.get("trec_dir")
    if trec_dir is not None:
        with atomic.staged_dir(Path(trec_dir)) as d:
            for method, by_task in ranked.items():
                trec.write_run(d / f"{method}.run", by_task, f"{system}.{arm}.{method}")
    result.write(Path(out))
    if tracking is not None:
        from crmatrix import trackers  # here: a run written without its event log loads no tracker

        trackers.event_log(out, Path(trec_dir) if trec_dir is not None else None, Path(tracking))
    return result
