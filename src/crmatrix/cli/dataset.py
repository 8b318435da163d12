"""`crmatrix dataset show` and `audit`: what a loader makes of a dataset file, and what its queries give away."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from crmatrix import CrmatrixError, atomic
from crmatrix.datasets import holdout

# The default size of a derived dataset (crmatrix.datasets.derived.DEFAULT_MAX_QUERIES, which a
# test holds this to), for the help text.
DERIVED_MAX_QUERIES = 300


def dataset_file(args) -> Path | None:
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


def dataset_tasks(args) -> list:
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
    file = dataset_file(args)
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


def cmd_show(args) -> int:
    for t in dataset_tasks(args):
        row = {"task_id": t.task_id, "query": t.query, "query_type": t.query_type, "gold": t.gold}
        print(json.dumps({**row, "stratum": t.stratum} if t.stratum else row, ensure_ascii=False))
    return 0


def cmd_audit(args) -> int:
    from crmatrix.datasets import audit, derived

    name = Path(args.file).stem if args.file else f"{Path(args.corpus).resolve().name}-{derived.FORMAT}"
    result = {"dataset": name, **audit.audit(dataset_tasks(args))}
    print(atomic.dumps_canonical(result) if args.json else audit.to_text(result, name), end="\n" if args.json else "")
    return 0


def add_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--corpus", required=True, help="the directory of source files the dataset is about")
    p.add_argument("--include", action="append", help="glob of files to index (repeatable; default: **)")
    p.add_argument("--exclude", action="append", help="glob of files to leave out (repeatable)")
    p.add_argument("--split", default="all", choices=holdout.SPLITS, help="which tasks (default: all)")
    p.add_argument("--seed", type=int, default=holdout.DEFAULT_SEED,
                   help=f"the shuffle of a dev/test split and of a derived sample (default: {holdout.DEFAULT_SEED})")
    p.add_argument("--max-queries", type=int, metavar="N",
                   help=f"a derived dataset's size: a seeded sample of at most N, stratified over directories "
                        f"(default: {DERIVED_MAX_QUERIES})")
