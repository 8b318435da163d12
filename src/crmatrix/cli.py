"""`crmatrix`: one evaluation outside Snakemake, config checks, and CI gates on a run.

    crmatrix run --corpus DIR --dataset FILE --arm NAME [--config FILE] [--out RUN.json]
    crmatrix validate CONFIG
    crmatrix check RUN.json --min hybrid.mrr=0.5 --max hybrid.latency_p95_ms=250
    crmatrix promote RUN.json [--out baselines/DATASET/SYSTEM/ARM.json]
    crmatrix check CANDIDATE.json --baseline BASELINE.json --max-drop hybrid.mrr=0.02
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from crmatrix import CrmatrixError, __version__, atomic, baseline, check, config, experiment, locations, sweeps
from crmatrix.stages import (build_index, build_system_index, evaluate_arm, extract_symbols, fetch_corpus,
                             install_system, prepare_dataset, prepare_model)
from crmatrix.systems import check_system_config, needs_index

DEFAULT_CONFIG = Path("config/config.yaml")


def _matrix_config(args) -> dict:
    """The matrix config (arms, systems, models), or the built-in defaults when there is none."""
    path = Path(args.config) if args.config else (DEFAULT_CONFIG if DEFAULT_CONFIG.exists() else None)
    if path:
        return config.load(path)
    return config.validate({"corpora": {"cli": {"path": args.corpus}},
                            "datasets": {"cli": {"file": args.dataset, "corpus": "cli"}},
                            "arms": {"baseline": {}}}, "built-in defaults")


def cmd_run(args) -> int:
    cfg = _matrix_config(args)
    if args.arm not in cfg["arms"]:
        raise CrmatrixError(f"--arm {args.arm!r} is not an arm of the config (known: {', '.join(cfg['arms'])})")
    if args.system not in cfg["systems"]:
        raise CrmatrixError(f"--system {args.system!r} is not a system of the config "
                            f"(known: {', '.join(cfg['systems'])})")
    env = experiment.arm_env(cfg, args.arm)
    sysconf = dict(cfg["systems"][args.system])
    if args.methods:
        sysconf["methods"] = args.methods.split(",")
        check_system_config(args.system, sysconf)
    sysconf = experiment.job_conf(sysconf)
    venv = _venv(cfg, args.system)
    name = Path(args.corpus).resolve().name
    cache_dir = Path(args.cache_dir or cfg["cache_dir"])
    with tempfile.TemporaryDirectory(prefix="crmatrix-run-") as tmp:
        t = Path(tmp)
        corpus_conf = {"path": args.corpus, "include": args.include or ["**"], "exclude": args.exclude or []}
        fetch_corpus.run(name, corpus_conf, t / "tree", t / "manifest.json", [], {})
        extract_symbols.run(t / "tree", t / "manifest.json", t / "symbols.jsonl")
        prepare_dataset.run(Path(args.dataset), args.format, name, t / "manifest.json", t / "symbols.jsonl",
                            t / "tasks.jsonl")
        index = model = None
        index_env = experiment.index_env(cfg, sysconf, args.arm)
        if needs_index(sysconf) and sysconf["type"] != "builtin":  # an external system's own index command
            index = t / "index"
            build_system_index.run(system=args.system, system_conf=sysconf, tree=t / "tree", env=index_env,
                                   out=index, home_dir=t / "home", venv=venv)
        elif needs_index(sysconf):
            model = t / "model"
            prepare_model.run(cfg["models"][experiment.arm_model(cfg, args.arm)], model)
            index = t / "index"
            build_index.run(symbols=t / "symbols.jsonl", manifest=t / "manifest.json", model_dir=model,
                            env=index_env, cache_dir=cache_dir, out=index, threads=cfg["embed_threads"])
        out = Path(args.out) if args.out else t / "run.json"
        run = evaluate_arm.run(tasks=t / "tasks.jsonl", symbols=t / "symbols.jsonl", manifest=t / "manifest.json",
                               tree=t / "tree", dataset_file=Path(args.dataset), out=out,
                               dataset=Path(args.dataset).stem, system=args.system, system_conf=sysconf,
                               arm=args.arm, env=env, top_k=args.top_k, index=index, model=model,
                               cache_dir=cache_dir, threads=cfg["embed_threads"], home_dir=t / "home", venv=venv)
    print(f"{run['dataset']} · {run['system']} · {run['arm']}")
    for method, res in run["methods"].items():
        m = res["metrics"]
        print(f"  {method:<9} mrr {m['mrr']:.3f}  acc@1 {m['acc@1']:.3f}  acc@5 {m['acc@5']:.3f}  "
              f"ndcg@10 {m['ndcg@10']:.3f}  recall@10 {m['recall@10']:.3f}  p95 {res['latency_ms']['p95']:.1f} ms  "
              f"n {m['n']}  errors {res['errors']}")
    if args.out:
        print(f"wrote {args.out}")
    return 0


def _venv(cfg: dict, system: str) -> Path | None:
    """The system's own environment where the workflow keeps it, installed first if it is not there."""
    venv = experiment.venv_dir(cfg, system)
    if venv is None:
        return None
    if not Path(venv).is_dir():
        print(f"installing {system} into {venv}", file=sys.stderr)
        locations.export(cfg)
        install_system.run(system=system, install_conf=cfg["systems"][system]["install"], out=Path(venv),
                           mirrors=locations.mirrors())
    return Path(venv)


def cmd_validate(args) -> int:
    cfg = config.load(args.config)
    for line in config.clamp_warnings(cfg):
        print(f"crmatrix: warning: {args.config}: {line}", file=sys.stderr)
    cells = sum(len(g["cells"]) for g in sweeps.grids(cfg).values())
    swept = f", {cells} of them from {len(cfg['sweeps'])} sweep{'s' * (len(cfg['sweeps']) != 1)}" if cells else ""
    print(f"{args.config}: ok ({len(cfg['corpora'])} corpora, {len(cfg['datasets'])} datasets, "
          f"{len(cfg['systems'])} systems, {len(cfg['arms'])} arms{swept})")
    return 0


def _read_run(path: str) -> dict:
    try:
        run = json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        raise CrmatrixError(f"{path}: not a readable run JSON ({e})") from e
    return check.validate_run(run, path)


def cmd_check(args) -> int:
    run = _read_run(args.run)
    gates = check.parse_gates(args.min or [], args.max or [])
    drops = [baseline.parse_drop(t) for t in args.max_drop or []]
    if bool(drops) != bool(args.baseline):
        raise CrmatrixError("check: --max-drop and --baseline go together (e.g. --baseline baselines/X.json "
                            "--max-drop hybrid.mrr=0.02)")
    if not gates and not drops:
        raise CrmatrixError("check: give at least one --min, --max or --max-drop gate (e.g. --min hybrid.mrr=0.5)")
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
    record = baseline.promote(_read_run(args.run), args.run)
    out = Path(args.out) if args.out else baseline.default_path(record)
    atomic.write_json(out, record)
    summary = "; ".join(f"{m}.mrr {r['metrics']['mrr']:.3f} [{r['ci']['mrr'][0]:.3f}, {r['ci']['mrr'][1]:.3f}]"
                        for m, r in record["methods"].items())
    print(f"wrote {out}: {record['dataset']['name']} · {record['system']['name']} ({record['system_version']}) · "
          f"{record['arm']['name']}: {summary}")
    return 0


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
    r.add_argument("--top-k", type=int, default=100)
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
                        f"randomization test gives p < {baseline.ALPHA:g} (repeatable)")
    c.set_defaults(func=cmd_check)
    pr = sub.add_parser("promote", help="keep a run as a baseline record (pins, metrics with intervals, per-query ranks)")
    pr.add_argument("run", help="a run JSON (results/runs/DATASET/SYSTEM/ARM.json)")
    pr.add_argument("--out", help="where to write it (default: baselines/DATASET/SYSTEM/ARM.json)")
    pr.set_defaults(func=cmd_promote)
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
