"""`crmatrix cache info`, `compact`, `evict`: what the embedding and index caches (and a repository's
commits' trees) hold, and freeing space."""

from __future__ import annotations

import json
import time
from pathlib import Path

from crmatrix.cli.matrix import config_path


def cache_dir(args) -> Path:
    """--cache-dir, else the cache_dir of --config (default: config/config.yaml if present),
    as the workflow would use it; else the default results/cache."""
    if args.cache_dir:
        return Path(args.cache_dir)
    from crmatrix import config
    from crmatrix.pipeline import locations

    path = config_path(args)
    return Path(config.load(path).cache_dir) if path else locations.cache_dir({})


def cmd_info(args) -> int:
    from crmatrix.pipeline import caches

    report = caches.info(Path(args.results), cache_dir(args))
    if args.json:
        print(json.dumps(report, indent=2, sort_keys=True))
    else:
        print("\n".join(caches.format_info(report, time.time())))
    return 0


def cmd_compact(args) -> int:
    from crmatrix.pipeline import caches

    for r in caches.compact(cache_dir(args)):
        print(f"model {r['model'][:12]}: {r['shards_before']} shards merged into {1 if r['entries_kept'] else 0} "
              f"({r['entries_kept']:,} entries), freed {caches.size(r['freed_bytes'])}")
    return 0


def cmd_evict(args) -> int:
    from crmatrix.pipeline import caches

    older = caches.parse_age(args.older_than) if args.older_than is not None else None
    now = time.time()
    results = Path(args.results)
    # Snakemake's lock is in the working directory that holds results/.
    report = caches.evict(results, cache_dir(args), results.resolve().parent, older_than=older,
                          corpus=args.corpus, everything=args.all, now=now)
    print("\n".join(caches.format_evict(report, now, caches.model_names(results))))
    return 0
