"""Each pipeline stage as one call from input paths to output paths.

The workflow scripts and the CLI both call these, so a stage behaves the same inside
Snakemake and outside it.
"""

from __future__ import annotations

import json
from pathlib import Path

from crmatrix import atomic, corpus, datasets, evaluate, matrix, provenance, tokenbench, trec
from crmatrix.datasets import Task
from crmatrix.guard import DEFAULT_BUDGET_S, DEFAULT_TIMEOUT_S, Guard
from crmatrix.symbols import Symbol, extract_files
from crmatrix.systems import SystemContext


def read_json(path: Path) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def load_symbols(path: Path) -> list[Symbol]:
    return [Symbol.from_dict(d) for d in atomic.read_jsonl(path)]


def load_tasks(path: Path) -> list[Task]:
    return [Task(**d) for d in atomic.read_jsonl(path)]


def fetch_corpus(name: str, conf: dict, tree: Path, manifest: Path, mirrors: list[str], registries: dict) -> dict:
    return corpus.build_corpus(name, conf, Path(tree), Path(manifest), mirrors, registries)


def extract_symbols(tree: Path, manifest: Path, out: Path) -> list[Symbol]:
    files = [f["path"] for f in read_json(manifest)["files"] if f["language"]]
    symbols = extract_files(Path(tree), files)
    atomic.write_jsonl(Path(out), [s.to_dict() for s in symbols])
    return symbols


def prepare_dataset(file: Path, fmt: str, corpus_name: str, manifest: Path, symbols: Path, out: Path,
                    qrels: Path | None = None) -> list[Task]:
    syms = load_symbols(symbols)
    tasks = datasets.load(Path(file), fmt, corpus_name, read_json(manifest), syms)
    atomic.write_jsonl(Path(out), [t.to_dict() for t in tasks])
    if qrels is not None:
        trec.write_qrels(Path(qrels), evaluate.qrels(tasks, syms))
    return tasks


def prepare_model(conf: dict, out: Path) -> dict:
    """A model directory with `model.json`: described in place, or exported to ONNX."""
    from crmatrix.embed.export import describe_st_model, export_onnx
    from crmatrix.embed.models import resolve_model_dir

    if conf["format"] == "onnx":
        quantize = None if conf["quantize"] == "none" else conf["quantize"]
        return export_onnx(resolve_model_dir(conf["source"]), Path(out), quantize)
    meta = describe_st_model(conf["source"])
    with atomic.staged_dir(Path(out)) as d:
        atomic.write_json(d / "model.json", meta)
    return meta


def build_index(*, symbols: Path, manifest: Path, model_dir: Path, env: dict, cache_dir: Path, out: Path,
                threads: int | None = None) -> dict:
    from crmatrix.engine import index, knobs

    kn = knobs.resolve(env, corpus.dominant_language(read_json(manifest)))
    return index.build(load_symbols(symbols), kn, Path(model_dir), Path(cache_dir), Path(out), threads)


def evaluate_arm(*, tasks: Path, symbols: Path, manifest: Path, tree: Path, dataset_file: Path, out: Path,
                 dataset: str, system: str, system_conf: dict, arm: str, env: dict, top_k: int,
                 index: Path | None = None, cache_dir: Path | None = None, threads: int | None = None,
                 trec_dir: Path | None = None, home_dir: Path | None = None) -> dict:
    """`home_dir`: an external system's own HOME (the workflow's results/home/{system});
    None gives it a temporary one for this job."""
    syms = load_symbols(symbols)
    man = read_json(manifest)
    task_list = load_tasks(tasks)
    guard = Guard(system_conf.get("timeout_s", DEFAULT_TIMEOUT_S), system_conf.get("budget_s", DEFAULT_BUDGET_S))
    ctx = SystemContext(Path(tree), man, syms, env, system_conf.get("options", {}),
                        Path(index) if index else None, Path(cache_dir) if cache_dir else None, threads,
                        Path(home_dir) if home_dir else None, guard.timeout_s, system)
    sysobj = evaluate.start_system(system_conf, ctx, guard)
    try:
        grep = tokenbench.grep_and_read(Path(tree), man, task_list, syms)
        methods, ranked, prepare_s = evaluate.evaluate(sysobj, task_list, syms, system_conf["methods"], top_k,
                                                       guard, grep)
        system_run = sysobj.provenance() if hasattr(sysobj, "provenance") else None
    finally:
        evaluate.stop_system(sysobj, guard)
    params = {"dataset": dataset, "system": system_conf, "arm": arm, "env": env, "top_k": top_k}
    prov = provenance.record(corpus=man["corpus"], manifest=man, dataset=dataset, dataset_file=Path(dataset_file),
                             system=system, system_conf=system_conf, arm=arm, env=env, params=params,
                             system_run=system_run)
    run = {"dataset": dataset, "system": system, "arm": arm, "top_k": top_k, "prepare_s": prepare_s,
           "methods": methods, "provenance": prov}
    if trec_dir is not None:
        with atomic.staged_dir(Path(trec_dir)) as d:
            for method, by_task in ranked.items():
                trec.write_run(d / f"{method}.run", by_task, f"{system}.{arm}.{method}")
    atomic.write_json(Path(out), run)
    return run


def build_system_index(*, system: str, system_conf: dict, tree: Path, env: dict, out: Path, home_dir: Path) -> dict:
    """An external system's index command, once per (corpus, index-time env) into `out`
    (the env is `systems.index_env(system_conf, arm env)`)."""
    from crmatrix.systems.external import build_index

    return build_index(system_conf, corpus_dir=Path(tree), env=env, out=Path(out), home_dir=Path(home_dir),
                       name=system)


def collect_matrix(runs: list[Path], baseline_arm: str, headline_method: str, arm_order: list[str],
                   archetypes: dict[str, str], json_out: Path, md_out: Path) -> dict:
    m = matrix.build([read_json(p) for p in runs], baseline_arm, headline_method, arm_order, archetypes)
    matrix.write(m, Path(json_out), Path(md_out))
    return m
