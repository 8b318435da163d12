"""`crmatrix`: one evaluation outside Snakemake, config checks, and CI gates on a run.

    crmatrix run --corpus DIR --dataset FILE --arm NAME [--config FILE] [--out RUN.json]
    crmatrix validate CONFIG
    crmatrix check RUN.json --min hybrid.mrr=0.5 --max hybrid.latency_p95_ms=250
    crmatrix promote RUN.json [--out baselines/DATASET/SYSTEM/ARM.json]
    crmatrix check CANDIDATE.json --baseline BASELINE.json --max-drop hybrid.mrr=0.02
    crmatrix cache info [--cache-dir D] [--json]
    crmatrix cache compact [--cache-dir D]
    crmatrix cache evict [--older-than 7d] [--corpus C] [--all] [--cache-dir D]
    crmatrix dataset show FORMAT FILE --corpus DIR [--split S] [--seed N]
    crmatrix knobs
    crmatrix dataset show derived --corpus DIR [--max-queries N] [--seed N]
    crmatrix dataset audit [FILE] --corpus DIR [--format F] [--split S] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from crmatrix import CrmatrixError, __version__, atomic
from crmatrix.datasets import holdout

# Each command imports what it runs, so `crmatrix --help` and `crmatrix validate` load no
# parser, engine or model library.

DEFAULT_CONFIG = Path("config/config.yaml")
# The default size of a derived dataset (crmatrix.datasets.derived.DEFAULT_MAX_QUERIES, which a
# test holds this to), and the significance level of a baseline gate (analysis.baseline.ALPHA),
# for the help texts.
DERIVED_MAX_QUERIES = 300
GATE_ALPHA = 0.05


def _run_matrix(args, corpus: str, dataset: str):
    """The matrix config (arms, systems, models; default: config/config.yaml if present, else
    built-in defaults) with this run's corpus directory and dataset file as its only corpus
    and dataset, and --methods and --top-k in place of the config's."""
    from crmatrix import config
    from crmatrix.config.yamlfile import read_yaml

    path = Path(args.config) if args.config else (DEFAULT_CONFIG if DEFAULT_CONFIG.exists() else None)
    raw = (read_yaml(path) or {}) if path else {"arms": {"baseline": {}}}
    raw["corpora"] = {corpus: {"path": args.corpus, "include": args.include or ["**"], "exclude": args.exclude or []}}
    raw["datasets"] = {dataset: {"file": args.dataset, "corpus": corpus, "format": args.format}}
    if args.top_k is not None:
        raw["top_k"] = args.top_k
    systems = raw.get("systems") or {"builtin": {"type": "builtin"}}
    if args.system not in systems:
        raise CrmatrixError(f"--system {args.system!r} is not a system of the config (known: {', '.join(systems)})")
    # this system alone, on this dataset: the others, the datasets it names, the pairs and the
    # matrix's headline method are no part of one run
    system = {k: v for k, v in systems[args.system].items() if k != "datasets"}
    if args.methods:
        system["methods"] = args.methods.split(",")
    raw["systems"] = {args.system: system}
    for key in ("reference_system", "compare", "headline_method"):
        raw.pop(key, None)
    matrix = config.from_dict(raw, str(path) if path else "built-in defaults")
    if args.arm not in matrix.arms:
        raise CrmatrixError(f"--arm {args.arm!r} is not an arm of the config (known: {', '.join(matrix.arms)})")
    return matrix


def cmd_run(args) -> int:
    from crmatrix.config.plan import Plan
    from crmatrix.datasets import derived
    from crmatrix.stages import evaluate_arm

    if args.format == derived.FORMAT:  # scored here on the corpus itself, its queries would be its own docs
        raise CrmatrixError(f"run: format {derived.FORMAT} is scored on the corpus's docs-withheld view, which the "
                            f"workflow makes: give a config a dataset {{format: {derived.FORMAT}, corpus: NAME}}")
    corpus, dataset = Path(args.corpus).resolve().name, Path(args.dataset).stem
    matrix = _run_matrix(args, corpus, dataset)
    cache_dir = Path(args.cache_dir or matrix.cache_dir)
    with tempfile.TemporaryDirectory(prefix="crmatrix-run-") as tmp:
        plan = Plan(matrix, root=tmp)
        cell = plan.cell(dataset, args.system, args.arm)
        _build_inputs(plan, cell, cache_dir)
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


def _build_inputs(plan, cell, cache_dir: Path) -> None:
    """Every input the cell's plan names, made by the stage the workflow makes it with (in the
    order they depend on each other), but the system's environment, made where the workflow keeps it."""
    from crmatrix.stages import (
        build_index,
        build_system_index,
        embed_queries,
        extract_graph,
        extract_symbols,
        fetch_corpus,
        grep_baseline,
        prepare_dataset,
        prepare_model,
    )

    m, i = plan.matrix, cell.inputs
    ds = m.datasets[cell.dataset]
    fetch_corpus.run(ds.corpus, m.corpora[ds.corpus].conf, Path(i["tree"]), Path(i["manifest"]), [], {})
    extract_symbols.run(Path(i["tree"]), Path(i["manifest"]), Path(i["symbols"]))
    prepare_dataset.run(Path(ds.file), ds.format, ds.corpus, Path(i["manifest"]), Path(i["symbols"]), Path(i["tasks"]))
    grep_baseline.run(tasks=Path(i["tasks"]), tree=Path(i["tree"]), manifest=Path(i["manifest"]),
                      symbols=Path(i["symbols"]), out=Path(i["grep"]))
    if "graph" in i:
        extract_graph.run(Path(i["tree"]), Path(i["manifest"]), Path(i["symbols"]), Path(i["graph"]))
    if "venv" in i:
        _install(m, cell.system, Path(i["venv"]))
    if "model" in i:
        model = m.arms[cell.arm].model
        prepare_model.run(model, m.models[model], Path(i["model"]))
    for model_dir in map(Path, i.get("system_models", [])):  # an external system's {model:NAME}
        prepare_model.run(model_dir.name, m.models[model_dir.name], model_dir)
    if "index" in i:
        key = Path(i["index"]).name
        if m.systems[cell.system].cls.EMBEDS:
            build_index.run(symbols=Path(i["symbols"]), manifest=Path(i["manifest"]), model_dir=Path(i["model"]),
                            knobs=plan.index_knobs(cell.system, ds.corpus, key), cache_dir=cache_dir,
                            out=Path(i["index"]), threads=m.embed_threads)
        else:  # an external system's own index command
            build_system_index.run(system=cell.system, system_conf=plan.index_conf(cell.system), tree=Path(i["tree"]),
                                   env=plan.index_env(cell.system, ds.corpus, key), out=Path(i["index"]),
                                   home_dir=Path(cell.params["home_dir"]), venv=i.get("venv"),
                                   models=i.get("system_models"))
    if "query_vectors" in i:
        embed_queries.run(tasks=Path(i["tasks"]), model_dir=Path(i["model"]), cache_dir=cache_dir,
                          out=Path(i["query_vectors"]), threads=m.embed_threads)


def _install(matrix, system: str, venv: Path) -> None:
    """The system's own environment, where the workflow keeps it, installed if it is not there yet."""
    from crmatrix.pipeline import locations
    from crmatrix.stages import install_system

    if not venv.is_dir():
        print(f"installing {system} into {venv}", file=sys.stderr)
        locations.export(matrix)
        install_system.run(system=system, install_conf=matrix.systems[system].conf["install"], out=venv,
                           mirrors=locations.mirrors())


def cmd_validate(args) -> int:
    from crmatrix import config
    from crmatrix.config import check
    from crmatrix.systems.registry import check_programs

    matrix = config.load(args.config)
    check.files(matrix)
    for name, system in matrix.systems.items():
        try:
            check_programs(name, system.conf)
        except CrmatrixError as e:
            raise CrmatrixError(f"{args.config}: {e}") from None
    for line in config.clamp_warnings(matrix):
        print(f"crmatrix: warning: {args.config}: {line}", file=sys.stderr)
    cells = sum(len(g["cells"]) for g in matrix.sweeps.values())
    n_sweeps = len(matrix.sweeps)
    swept = f", {cells} of them from {n_sweeps} sweep{'s' * (n_sweeps != 1)}" if cells else ""
    seen = len(matrix.corpora_of("view"))
    made = f" + {seen} docs-withheld view{'s' * (seen != 1)}" if seen else ""
    left = "; ".join(f"{d} {sum(by.values())} ({', '.join(f'{r} {n}' for r, n in by.items())})"
                     for d, by in matrix.undeclared.items())
    left = f"; rows of repositories no entry of repositories: declares, left out: {left}" if left else ""
    print(f"{args.config}: ok ({len(matrix.corpora) - seen} corpora{made}, {len(matrix.datasets)} datasets, "
          f"{len(matrix.systems)} systems, {len(matrix.arms)} arms{swept}){left}")
    return 0


def _read_run(path: str):
    from crmatrix.results.run import Run

    try:
        return Run.read(Path(path))
    except OSError as e:
        raise CrmatrixError(f"{path}: cannot read the run: {e.strerror}") from None


def cmd_check(args) -> int:
    from crmatrix.analysis import baseline, check

    gates = check.parse_gates(args.min or [], args.max or [])
    drops = [check.parse_drop(t) for t in args.max_drop or []]
    if bool(drops) != bool(args.baseline):
        raise CrmatrixError("check: --max-drop and --baseline go together (e.g. --baseline baselines/X.json "
                            "--max-drop hybrid.mrr=0.02)")
    if not gates and not drops:
        raise CrmatrixError("check: give at least one --min, --max or --max-drop gate (e.g. --min hybrid.mrr=0.5)")
    run = _read_run(args.run)  # after the gates: a misspelled one is a usage error, whatever the file
    failures = check.check(run, gates)
    for line in failures:
        print(f"FAIL {line}")
    if drops:
        record = baseline.read(Path(args.baseline))
        baseline.comparable(record, run, args.baseline, args.run)
        results = baseline.gate(record, run, drops, args.run)
        for r in results:
            print(baseline.describe(r))
        failures += [r for r in results if not r["pass"]]
    total = len(gates) + len(drops)
    print(f"{args.run}: {total - len(failures)} of {total} gates passed")
    return 1 if failures else 0


def cmd_promote(args) -> int:
    from crmatrix.analysis import baseline

    record = baseline.promote(_read_run(args.run), args.run)
    out = Path(args.out) if args.out else baseline.default_path(record)
    atomic.write_json(out, record)
    summary = "; ".join(f"{m}.mrr {r['metrics']['mrr']:.3f} [{r['ci']['mrr'][0]:.3f}, {r['ci']['mrr'][1]:.3f}]"
                        for m, r in record["methods"].items())
    print(f"wrote {out}: {record['dataset']['name']} · {record['system']['name']} ({record['system_version']}) · "
          f"{record['arm']['name']}: {summary}")
    return 0


def _cache_dir(args) -> Path:
    """--cache-dir, else the cache_dir of --config (default: config/config.yaml if present),
    as the workflow would use it; else the default results/cache."""
    if args.cache_dir:
        return Path(args.cache_dir)
    from crmatrix import config
    from crmatrix.pipeline import locations

    path = Path(args.config) if args.config else (DEFAULT_CONFIG if DEFAULT_CONFIG.exists() else None)
    return Path(config.load(path).cache_dir) if path else locations.cache_dir({})


def cmd_cache_info(args) -> int:
    from crmatrix.pipeline import caches

    report = caches.info(Path(args.results), _cache_dir(args))
    if args.json:
        print(json.dumps(report, indent=2, sort_keys=True))
    else:
        print("\n".join(caches.format_info(report, time.time())))
    return 0


def cmd_cache_compact(args) -> int:
    from crmatrix.pipeline import caches

    for r in caches.compact(_cache_dir(args)):
        print(f"model {r['model'][:12]}: {r['shards_before']} shards merged into {1 if r['entries_kept'] else 0} "
              f"({r['entries_kept']:,} entries), freed {caches.size(r['freed_bytes'])}")
    return 0


def cmd_cache_evict(args) -> int:
    from crmatrix.pipeline import caches

    older = caches.parse_age(args.older_than) if args.older_than is not None else None
    now = time.time()
    results = Path(args.results)
    # Snakemake's lock is in the working directory that holds results/.
    report = caches.evict(results, _cache_dir(args), results.resolve().parent, older_than=older,
                          corpus=args.corpus, everything=args.all, now=now)
    print("\n".join(caches.format_evict(report, now, caches.model_names(results))))
    return 0


def _dataset_file(args) -> Path | None:
    """The dataset file the command names: none for a derived dataset, which is made of --corpus."""
    from crmatrix.datasets import derived

    if args.format == derived.FORMAT:
        if args.file:
            raise CrmatrixError(f"dataset {args.dataset_command}: format {derived.FORMAT} reads no FILE (its queries "
                                "come from the leading docs of --corpus)")
        return None
    if not args.file:
        raise CrmatrixError(f"dataset {args.dataset_command}: format {args.format} needs a dataset FILE")
    if args.max_queries is not None:
        raise CrmatrixError(f"--max-queries samples only format {derived.FORMAT}, not {args.format}")
    return Path(args.file)


def _dataset_tasks(args) -> list:
    """The dataset file loaded as the pipeline would, against the corpus directory as its files
    and symbols are selected and extracted (in a scratch copy; nothing is written elsewhere),
    sampled (derived) and narrowed to the split; the loader's summary and each dropped row go
    to stderr."""
    from crmatrix.corpora.tree import select_files
    from crmatrix.datasets import derived, registry
    from crmatrix.symbols.extract import extract_files

    src = Path(args.corpus)
    if not src.is_dir():
        raise CrmatrixError(f"--corpus {args.corpus}: not a directory")
    file = _dataset_file(args)
    name = src.resolve().name
    with tempfile.TemporaryDirectory(prefix="crmatrix-dataset-") as tmp:
        tree = Path(tmp) / "tree"
        part = select_files(src, tree, args.include or ["**"], args.exclude or [])
        symbols = extract_files(tree, [f["path"] for f in part["files"] if f["language"]])
        manifest = {"corpus": name, "pin": {"kind": "path", "path": str(src)}, **part}
        loaded = registry.load_all(file or src, args.format, name, manifest, symbols, tree)
    where = str(file or src)
    found = loaded.tasks
    if file is None:
        found = holdout.sample(found, args.max_queries or derived.DEFAULT_MAX_QUERIES, args.seed, where)
    tasks = holdout.select(found, args.split, args.seed, where)
    summary = loaded.summary(args.format)
    reasons = "".join(f", {n} {r}" for r, n in summary["dropped_by_reason"].items())
    sampled = f"; sampled {len(found)}" if file is None else ""
    print(f"{where}: format {args.format}: {summary['tasks']} tasks, {summary['dropped']} dropped{reasons}{sampled}; "
          f"split {args.split}: {len(tasks)} tasks", file=sys.stderr)
    for d in summary["drops"]:
        print(f"  dropped row {d['row']}: {d['reason']}: {d['detail']}", file=sys.stderr)
    return tasks


def cmd_dataset_show(args) -> int:
    for t in _dataset_tasks(args):
        row = {"task_id": t.task_id, "query": t.query, "query_type": t.query_type, "gold": t.gold}
        print(json.dumps({**row, "stratum": t.stratum} if t.stratum else row, ensure_ascii=False))
    return 0


def cmd_dataset_audit(args) -> int:
    from crmatrix.datasets import audit, derived

    name = Path(args.file).stem if args.file else f"{Path(args.corpus).resolve().name}-{derived.FORMAT}"
    result = {"dataset": name, **audit.audit(_dataset_tasks(args))}
    print(atomic.dumps_canonical(result) if args.json else audit.to_text(result, name), end="\n" if args.json else "")
    return 0


def cmd_knobs(args) -> int:
    from crmatrix.engine import knobs

    print(knobs.markdown(), end="")
    return 0


def _dataset_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--corpus", required=True, help="the directory of source files the dataset is about")
    p.add_argument("--include", action="append", help="glob of files to index (repeatable; default: **)")
    p.add_argument("--exclude", action="append", help="glob of files to leave out (repeatable)")
    p.add_argument("--split", default="all", choices=holdout.SPLITS, help="which tasks (default: all)")
    p.add_argument("--seed", type=int, default=holdout.DEFAULT_SEED,
                   help=f"the shuffle of a dev/test split and of a derived sample (default: {holdout.DEFAULT_SEED})")
    p.add_argument("--max-queries", type=int, metavar="N",
                   help=f"a derived dataset's size: a seeded sample of at most N, stratified over directories "
                        f"(default: {DERIVED_MAX_QUERIES})")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="crmatrix", description=__doc__.split("\n")[0])
    p.add_argument("--version", action="version", version=f"crmatrix {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="evaluate one dataset on one corpus directory under one arm")
    r.add_argument("--corpus", required=True, help="directory to search (a checkout, or results/corpora/X/tree)")
    r.add_argument("--dataset", required=True, help="query dataset file")
    r.add_argument("--format", default="codelens", help="dataset format (default: codelens)")
    r.add_argument("--arm", default="baseline", help="arm name, looked up in --config (default: baseline)")
    r.add_argument("--config", help=f"matrix config holding arms, systems and models (default: {DEFAULT_CONFIG} "
                                     "if present, else built-in defaults)")
    r.add_argument("--system", default="builtin")
    r.add_argument("--methods", help="comma-separated methods (default: the system's)")
    r.add_argument("--include", action="append", help="glob of files to index (repeatable; default: **)")
    r.add_argument("--exclude", action="append", help="glob of files to leave out (repeatable)")
    r.add_argument("--top-k", type=int, help="ranking depth (default: the config's top_k, 100 if it names none)")
    r.add_argument("--cache-dir", help="embedding cache directory (default: the config's cache_dir)")
    r.add_argument("--out", help="write the run JSON here")
    r.set_defaults(func=cmd_run)
    v = sub.add_parser("validate", help="check a matrix config and print what it holds")
    v.add_argument("config")
    v.set_defaults(func=cmd_validate)
    c = sub.add_parser("check", help="exit 1 when a run misses a gate (for a CI)")
    c.add_argument("run", help="a run JSON (results/runs/DATASET/SYSTEM/ARM.json)")
    c.add_argument("--min", action="append", metavar="METHOD.METRIC=VALUE", help="fail below (repeatable)")
    c.add_argument("--max", action="append", metavar="METHOD.METRIC=VALUE", help="fail above (repeatable)")
    c.add_argument("--baseline", help="a baseline record (crmatrix promote) to gate the run against")
    c.add_argument("--max-drop", action="append", metavar="METHOD.METRIC=DROP",
                   help="fail when the metric drops more than DROP below the baseline's and the paired "
                        f"randomization test gives p < {GATE_ALPHA:g} (repeatable)")
    c.set_defaults(func=cmd_check)
    pr = sub.add_parser("promote",
                        help="keep a run as a baseline record (pins, metrics with intervals, per-query ranks)")
    pr.add_argument("run", help="a run JSON (results/runs/DATASET/SYSTEM/ARM.json)")
    pr.add_argument("--out", help="where to write it (default: baselines/DATASET/SYSTEM/ARM.json)")
    pr.set_defaults(func=cmd_promote)
    ca = sub.add_parser("cache", help="what the embedding and index caches hold; free space")
    ca_sub = ca.add_subparsers(dest="cache_command", required=True)
    for name, func, help_text in (
            ("info", cmd_cache_info, "embedding models, entries, bytes; each index, the runs using it; kept builds"),
            ("compact", cmd_cache_compact, "merge each model's embedding shards into one (safe while jobs run)"),
            ("evict", cmd_cache_evict, "remove indexes and embedding entries (refused while Snakemake runs)")):
        cp = ca_sub.add_parser(name, help=help_text)
        cp.add_argument("--cache-dir", help="the cache_dir (default: the config's, else results/cache)")
        cp.add_argument("--config", help=f"matrix config naming the cache_dir (default: {DEFAULT_CONFIG} if present)")
        cp.add_argument("--results", default="results", help="the workflow's results directory (default: results)")
        cp.set_defaults(func=func)
        if name == "info":
            cp.add_argument("--json", action="store_true", help="print the figures as JSON (bytes exact)")
        if name == "evict":
            cp.add_argument("--older-than", metavar="D", help="only what was last used more than D ago (7d, 12h, 30m)")
            cp.add_argument("--corpus", metavar="C", help="only the indexes of corpus C (and entries only they used)")
            cp.add_argument("--all", action="store_true", help="empty both caches")
    d = sub.add_parser("dataset", help="what a loader makes of a dataset file, and what its queries give away")
    dsub = d.add_subparsers(dest="dataset_command", required=True)
    show = dsub.add_parser("show", help="the normalized tasks as JSONL on stdout, the dropped rows on stderr")
    show.add_argument("format", help="dataset format (e.g. codelens, derived)")
    show.add_argument("file", nargs="?", help="dataset file (none for derived)")
    _dataset_options(show)
    show.set_defaults(func=cmd_dataset_show)
    au = dsub.add_parser("audit", help="name overlap of queries and gold, near-duplicate queries, query types, "
                                       "gold spread over files; flags a set whose queries restate the names")
    au.add_argument("file", nargs="?", help="dataset file (none for --format derived)")
    au.add_argument("--format", default="codelens", help="dataset format (default: codelens)")
    au.add_argument("--json", action="store_true", help="print the audit as JSON")
    _dataset_options(au)
    au.set_defaults(func=cmd_dataset_audit)
    k = sub.add_parser("knobs", help="the arm knobs of the builtin engine as a Markdown table (docs/knobs.md)")
    k.set_defaults(func=cmd_knobs)
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return args.func(args)
    except CrmatrixError as e:
        print(f"crmatrix: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
