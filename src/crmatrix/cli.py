"""`crmatrix`: one evaluation outside Snakemake, and config checks.

    crmatrix run --corpus DIR --dataset FILE --arm NAME [--config FILE] [--out RUN.json]
    crmatrix validate CONFIG
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from crmatrix import CrmatrixError, __version__, config, pipeline

DEFAULT_CONFIG = Path("config/config.yaml")


def _arm_env(args) -> tuple[dict, dict]:
    """The arm's env and the system's config, from the matrix config when there is one."""
    cfg_path = Path(args.config) if args.config else (DEFAULT_CONFIG if DEFAULT_CONFIG.exists() else None)
    cfg = config.load(cfg_path) if cfg_path else None
    arms = cfg["arms"] if cfg else {"baseline": {}}
    if args.arm not in arms:
        where = cfg_path or "the built-in arms"
        raise CrmatrixError(f"--arm {args.arm!r} is not an arm of {where} (known: {', '.join(sorted(arms))})")
    systems = cfg["systems"] if cfg else {"builtin": {"type": "builtin"}}
    if args.system not in systems:
        raise CrmatrixError(f"--system {args.system!r} is not a system of {cfg_path} (known: {', '.join(sorted(systems))})")
    sysconf = dict(systems[args.system])
    if args.methods:
        sysconf["methods"] = args.methods.split(",")
    from crmatrix.systems import check_system_config

    check_system_config(args.system, sysconf)
    return arms[args.arm], sysconf


def cmd_run(args) -> int:
    env, sysconf = _arm_env(args)
    corpus_conf = {"path": args.corpus, "include": args.include or ["**"], "exclude": args.exclude or []}
    name = Path(args.corpus).resolve().name
    with tempfile.TemporaryDirectory(prefix="crmatrix-run-") as tmp:
        t = Path(tmp)
        pipeline.fetch_corpus(name, corpus_conf, t / "tree", t / "manifest.json", [], {})
        pipeline.extract_symbols(t / "tree", t / "manifest.json", t / "symbols.jsonl")
        pipeline.prepare_dataset(Path(args.dataset), args.format, name, t / "manifest.json", t / "symbols.jsonl",
                                 t / "tasks.jsonl")
        out = Path(args.out) if args.out else t / "run.json"
        run = pipeline.evaluate_arm(tasks=t / "tasks.jsonl", symbols=t / "symbols.jsonl",
                                    manifest=t / "manifest.json", tree=t / "tree", dataset_file=Path(args.dataset),
                                    out=out, dataset=Path(args.dataset).stem, system=args.system,
                                    system_conf=sysconf, arm=args.arm, env=env, top_k=args.top_k)
    print(f"{run['dataset']} · {run['system']} · {run['arm']}")
    for method, res in run["methods"].items():
        m = res["metrics"]
        print(f"  {method:<9} mrr {m['mrr']:.3f}  acc@1 {m['acc@1']:.3f}  acc@3 {m['acc@3']:.3f}  "
              f"acc@5 {m['acc@5']:.3f}  recall@10 {m['recall@10']:.3f}  n {m['n']}  errors {res['errors']}")
    if args.out:
        print(f"wrote {args.out}")
    return 0


def cmd_validate(args) -> int:
    cfg = config.load(args.config)
    print(f"{args.config}: ok ({len(cfg['corpora'])} corpora, {len(cfg['datasets'])} datasets, "
          f"{len(cfg['systems'])} systems, {len(cfg['arms'])} arms)")
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
    r.add_argument("--config", help=f"matrix config holding the arms and systems (default: {DEFAULT_CONFIG} if present)")
    r.add_argument("--system", default="builtin")
    r.add_argument("--methods", help="comma-separated methods (default: all the system has)")
    r.add_argument("--include", action="append", help="glob of files to index (repeatable; default: **)")
    r.add_argument("--exclude", action="append", help="glob of files to leave out (repeatable)")
    r.add_argument("--top-k", type=int, default=100)
    r.add_argument("--out", help="write the run JSON here")
    r.set_defaults(func=cmd_run)
    v = sub.add_parser("validate", help="check a matrix config and print what it holds")
    v.add_argument("config")
    v.set_defaults(func=cmd_validate)
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
