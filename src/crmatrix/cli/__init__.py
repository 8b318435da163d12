"""`crmatrix`: one evaluation outside Snakemake, config checks, and CI gates on a run.

    crmatrix run --corpus DIR --dataset FILE --arm NAME [--config FILE] [--out RUN.json]
    crmatrix try SYSTEM --corpus C --query TEXT [--config FILE] [--method M] [-k N] [--arm A]
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
import sys

from crmatrix import CrmatrixError, __version__
from crmatrix.cli import cache, dataset, gates, matrix, run, trial
from crmatrix.cli.matrix import DEFAULT_CONFIG

# One module per kind of command (run; try; validate and knobs; check and promote; cache; dataset),
# the parser here. Each command imports what it runs, so `crmatrix --help` and `crmatrix
# validate` load no parser, engine or model library.


def _run_and_try(sub) -> None:
    """The commands that ask a system: one run of a dataset, one query."""
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
    r.set_defaults(func=run.cmd_run)
    t = sub.add_parser("try", help="ask one system of the config one query: its tools, raw answer, hits and what "
                                   "each resolved to in the corpus")
    t.add_argument("system", help="a system of the config")
    t.add_argument("--corpus", required=True, help="a corpus of the config, or a directory")
    t.add_argument("--query", required=True, help="the query")
    t.add_argument("--config", help=f"matrix config (default: {DEFAULT_CONFIG} if present, else built-in defaults)")
    t.add_argument("--method", help="the method to ask (default: the system's first)")
    t.add_argument("-k", type=int, default=10, help="how many hits to ask for (default: 10)")
    t.add_argument("--arm", help="the arm whose variables the system sees (default: the config's baseline)")
    t.add_argument("--cache-dir", help="embedding cache directory (default: the config's cache_dir)")
    t.set_defaults(func=trial.cmd_try)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="crmatrix", description=__doc__.split("\n")[0])
    p.add_argument("--version", action="version", version=f"crmatrix {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    _run_and_try(sub)
    v = sub.add_parser("validate", help="check a matrix config and print what it holds")
    v.add_argument("config")
    v.set_defaults(func=matrix.cmd_validate)
    c = sub.add_parser("check", help="exit 1 when a run misses a gate (for a CI)")
    c.add_argument("run", help="a run JSON (results/runs/DATASET/SYSTEM/ARM.json)")
    c.add_argument("--min", action="append", metavar="METHOD.METRIC=VALUE", help="fail below (repeatable)")
    c.add_argument("--max", action="append", metavar="METHOD.METRIC=VALUE", help="fail above (repeatable)")
    c.add_argument("--baseline", help="a baseline record (crmatrix promote) to gate the run against")
    c.add_argument("--max-drop", action="append", metavar="METHOD.METRIC=DROP",
                   help="fail when the metric drops more than DROP below the baseline's and the paired "
                        f"randomization test gives p < {gates.GATE_ALPHA:g} (repeatable)")
    c.set_defaults(func=gates.cmd_check)
    pr = sub.add_parser("promote",
                        help="keep a run as a baseline record (pins, metrics with intervals, per-query ranks)")
    pr.add_argument("run", help="a run JSON (results/runs/DATASET/SYSTEM/ARM.json)")
    pr.add_argument("--out", help="where to write it (default: baselines/DATASET/SYSTEM/ARM.json)")
    pr.set_defaults(func=gates.cmd_promote)
    ca = sub.add_parser("cache", help="what the embedding and index caches hold; free space")
    ca_sub = ca.add_subparsers(dest="cache_command", required=True)
    for name, func, help_text in (
            ("info", cache.cmd_info, "embedding models, entries, bytes; each index, the runs using it; kept builds;"
             " commits' trees"),
            ("compact", cache.cmd_compact, "merge each model's embedding shards into one (safe while jobs run)"),
            ("evict", cache.cmd_evict, "remove indexes, embedding entries, commits' trees"
             " (refused while Snakemake runs)")):
        cp = ca_sub.add_parser(name, help=help_text)
        cp.add_argument("--cache-dir", help="the cache_dir (default: the config's, else results/cache)")
        cp.add_argument("--config", help=f"matrix config naming the cache_dir (default: {DEFAULT_CONFIG} if present)")
        cp.add_argument("--results", default="results", help="the workflow's results directory (default: results)")
        cp.set_defaults(func=func)
        if name == "info":
            cp.add_argument("--json", action="store_true", help="print the figures as JSON (bytes exact)")
        if name == "evict":
            cp.add_argument("--older-than", metavar="D", help="only what was last used more than D ago (7d, 12h, 30m)")
            cp.add_argument("--corpus", metavar="C", help="only the indexes and trees of corpus C"
                            " (and entries only they used)")
            cp.add_argument("--all", action="store_true", help="empty the caches")
    d = sub.add_parser("dataset", help="what a loader makes of a dataset file, and what its queries give away")
    dsub = d.add_subparsers(dest="dataset_command", required=True)
    show = dsub.add_parser("show", help="the normalized tasks as JSONL on stdout, the dropped rows on stderr")
    show.add_argument("format", help="dataset format (e.g. codelens, derived)")
    show.add_argument("file", nargs="?", help="dataset file (none for derived)")
    dataset.add_options(show)
    show.set_defaults(func=dataset.cmd_show)
    au = dsub.add_parser("audit", help="name overlap of queries and gold, near-duplicate queries, query types, "
                                       "gold spread over files; flags a set whose queries restate the names")
    au.add_argument("file", nargs="?", help="dataset file (none for --format derived)")
    au.add_argument("--format", default="codelens", help="dataset format (default: codelens)")
    au.add_argument("--json", action="store_true", help="print the audit as JSON")
    dataset.add_options(au)
    au.set_defaults(func=dataset.cmd_audit)
    k = sub.add_parser("knobs", help="the arm knobs of the builtin engine as a Markdown table (docs/knobs.md)")
    k.set_defaults(func=matrix.cmd_knobs)
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
