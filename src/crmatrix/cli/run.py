"""`crmatrix run`: one evaluation outside Snakemake, its inputs made by the workflow's stages."""

from __future__ import annotations

import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from crmatrix import CrmatrixError
from crmatrix.cli.matrix import config_path


def run_matrix(args, corpus: str, dataset: str):
    """The matrix config (arms, systems, models; default: config/config.yaml if present, else
    built-in defaults) with this run's corpus directory and dataset file as its only corpus
    and dataset, and --methods and --top-k in place of the config's."""
    from crmatrix import config
    from crmatrix.config.yamlfile import read_yaml

    path = config_path(args)
    raw = (read_yaml(path) or {}) if path else {"arms": {"baseline": {}}}
    raw["corpora"] = {corpus: {"path": args.corpus, "include": args.include or ["**"], "exclude": args.exclude or []}}
    raw["datasets"] = {dataset: {"file": args.dataset, "corpus": corpus, "format": args.format}}
    if args.top_k is not None:
        raw["top_k"] = args.top_k
    one_system(raw, args.system, args.methods.split(",") if args.methods else None, "--system")
    matrix = config.from_dict(raw, str(path) if path else "built-in defaults")
    if args.arm not in matrix.arms:
        raise CrmatrixError(f"--arm {args.arm!r} is not an arm of the config (known: {', '.join(matrix.arms)})")
    return matrix


def one_system(raw: dict, name: str, methods: list[str] | None, what: str) -> None:
    """`raw` (a config's contents) narrowed to the system `name` (default systems: the builtin)
    under `methods` (None: its own), for one job: the other systems, the datasets it names, the
    pairs and the matrix's headline method are no part of it. `what` names the system's option."""
    from crmatrix import did_you_mean

    systems = raw.get("systems") or {"builtin": {"type": "builtin"}}
    if name not in systems:
        raise CrmatrixError(f"{what} {name!r} is not a system of the config ({did_you_mean(name, list(systems))}"
                            f"known: {', '.join(systems)})")
    system = {k: v for k, v in systems[name].items() if k != "datasets"}
    if methods:
        system["methods"] = methods
    raw["systems"] = {name: system}
    for key in ("reference_system", "compare", "headline_method"):
        raw.pop(key, None)


def cmd_run(args) -> int:
    from crmatrix.config.plan import Plan
    from crmatrix.datasets import derived
    from crmatrix.stages import evaluate_arm

    if args.format == derived.FORMAT:  # scored here on the corpus itself, its queries would be its own docs
        raise CrmatrixError(f"run: format {derived.FORMAT} is scored on the corpus's docs-withheld view, which the "
                            f"workflow makes: give a config a dataset {{format: {derived.FORMAT}, corpus: NAME}}")
    corpus, dataset = Path(args.corpus).resolve().name, Path(args.dataset).stem
    matrix = run_matrix(args, corpus, dataset)
    cache_dir = Path(args.cache_dir or matrix.cache_dir)
    with tempfile.TemporaryDirectory(prefix="crmatrix-run-") as tmp:
        plan = Plan(matrix, root=tmp)
        cell = plan.cell(dataset, args.system, args.arm)
        build_inputs(plan, cell, cache_dir)
        # the run alone (no TREC files), where --out says
        cell = replace(cell, outputs={"run": args.out or cell.outputs["run"]})
        run = evaluate_arm.run(cell, cache_dir=cache_dir, threads=matrix.embed_threads)
    print(f"{run.dataset} · {run.system} · {run.arm}")
    for method, res in run.methods.items():
        m = res.metrics
        print(f"  {method:<9} mrr {m['mrr']:.3f}  acc@1 {m['acc@1']:.3f}  acc@5 {m['acc@5']:.3f}  "
              f"ndcg@10 {m['ndcg@10']:.3f}  recall@10 {m['recall@10']:.3f}  p95 {res.latency_ms['p95']:.1f} ms  "
              f"n {m['n']}  errors {res.errors}")
    if args.out:
        print(f"wrote {args.out}")
    return 0


def build_inputs(plan, cell, cache_dir: Path) -> None:
    """Every input the cell's plan names, made by the stage the workflow makes it with (in the
    order they depend on each other), but the system's environment, made where the workflow keeps it."""
    from crmatrix.stages import embed_queries, grep_baseline, prepare_dataset

    m, i = plan.matrix, cell.inputs
    ds = m.datasets[cell.dataset]
    build_corpus(plan, cell)
    prepare_dataset.run(Path(ds.file), ds.format, ds.corpus, Path(i["manifest"]), Path(i["symbols"]), Path(i["tasks"]))
    grep_baseline.run(tasks=Path(i["tasks"]), tree=Path(i["tree"]), manifest=Path(i["manifest"]),
                      symbols=Path(i["symbols"]), out=Path(i["grep"]))
    build_system(plan, cell, cache_dir)
    if "query_vectors" in i:
        embed_queries.run(tasks=Path(i["tasks"]), model_dir=Path(i["model"]), cache_dir=cache_dir,
                          out=Path(i["query_vectors"]), threads=m.embed_threads)


def build_corpus(plan, cell) -> None:
    """The cell's corpus fetched (a pinned one from the mirrors and registries the workflow's
    fetch uses) and its symbols extracted."""
    from crmatrix.pipeline import locations
    from crmatrix.stages import extract_symbols, fetch_corpus

    m, i = plan.matrix, cell.inputs
    corpus = m.datasets[cell.dataset].corpus
    locations.export(m)
    fetch_corpus.run(corpus, m.corpora[corpus].conf, Path(i["tree"]), Path(i["manifest"]), locations.mirrors(),
                     locations.registries())
    extract_symbols.run(Path(i["tree"]), Path(i["manifest"]), Path(i["symbols"]))


def build_system(plan, cell, cache_dir: Path) -> None:
    """What the cell's system needs of the corpus (graph, environment, models, index), made as
    the workflow makes it."""
    from crmatrix.stages import build_index, build_system_index, extract_graph, prepare_model

    m, i = plan.matrix, cell.inputs
    ds = m.datasets[cell.dataset]
    if "graph" in i:
        extract_graph.run(Path(i["tree"]), Path(i["manifest"]), Path(i["symbols"]), Path(i["graph"]))
    if "venv" in i:
        _install(m, cell.system, Path(i["venv"]))
    if "model" in i:
        model = m.arms[cell.arm].model
        prepare_model.run(model, m.models[model].to_conf(), Path(i["model"]))
    for model_dir in map(Path, i.get("system_models", [])):  # an external system's {model:NAME}
        prepare_model.run(model_dir.name, m.models[model_dir.name].to_conf(), model_dir)
    if "index" in i:
        key = Path(i["index"]).name
        if m.systems[cell.system].cls.crmatrix_builds_index():
            build_index.run(symbols=Path(i["symbols"]), manifest=Path(i["manifest"]), model_dir=Path(i["model"]),
                            knobs=plan.index_knobs(cell.system, ds.corpus, key), cache_dir=cache_dir,
                            out=Path(i["index"]), threads=m.embed_threads)
        else:  # an external system's own index command
            build_system_index.run(system=cell.system, system_conf=plan.index_conf(cell.system), tree=Path(i["tree"]),
                                   env=plan.index_env(cell.system, ds.corpus, key), out=Path(i["index"]),
                                   home_dir=Path(cell.params["home_dir"]), venv=i.get("venv"),
                                   models=i.get("system_models"))


def _install(matrix, system: str, venv: Path) -> None:
    """The system's own environment, where the workflow keeps it, installed if it is not there yet."""
    from crmatrix.pipeline import locations
    from crmatrix.stages import install_system

    if not venv.is_dir():
        print(f"installing {system} into {venv}", file=sys.stderr)
        locations.export(matrix)
        install_system.run(system=system, install_conf=matrix.systems[system].spec.install, out=venv,
                           mirrors=locations.mirrors())
