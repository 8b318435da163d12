"""Each pipeline stage as one call from input paths to output paths.

The workflow scripts and the CLI both call these, so a stage behaves the same inside
Snakemake and outside it.
"""

from __future__ import annotations

import json
from pathlib import Path

from crmatrix import atomic, corpus, datasets, evaluate, matrix, provenance
from crmatrix.datasets import Task
from crmatrix.symbols import Symbol, extract_files
from crmatrix.systems import SystemContext, make_system


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


def prepare_dataset(file: Path, fmt: str, corpus_name: str, manifest: Path, symbols: Path, out: Path) -> list[Task]:
    tasks = datasets.load(Path(file), fmt, corpus_name, read_json(manifest), load_symbols(symbols))
    atomic.write_jsonl(Path(out), [t.to_dict() for t in tasks])
    return tasks


def evaluate_arm(*, tasks: Path, symbols: Path, manifest: Path, tree: Path, dataset_file: Path, out: Path,
                 dataset: str, system: str, system_conf: dict, arm: str, env: dict, top_k: int) -> dict:
    syms = load_symbols(symbols)
    man = read_json(manifest)
    ctx = SystemContext(Path(tree), man, syms, env, system_conf.get("options", {}))
    sysobj = make_system(system_conf, ctx)
    params = {"dataset": dataset, "system": system_conf, "arm": arm, "env": env, "top_k": top_k}
    run = {
        "dataset": dataset,
        "system": system,
        "arm": arm,
        "top_k": top_k,
        "methods": evaluate.evaluate(sysobj, load_tasks(tasks), syms, system_conf["methods"], top_k),
        "provenance": provenance.record(corpus=man["corpus"], manifest=man, dataset=dataset,
                                        dataset_file=Path(dataset_file), system=system, system_conf=system_conf,
                                        arm=arm, env=env, params=params),
    }
    atomic.write_json(Path(out), run)
    return run


def collect_matrix(runs: list[Path], baseline_arm: str, headline_method: str, arm_order: list[str],
                   json_out: Path, md_out: Path) -> dict:
    m = matrix.build([read_json(p) for p in runs], baseline_arm, headline_method, arm_order)
    matrix.write(m, Path(json_out), Path(md_out))
    return m
