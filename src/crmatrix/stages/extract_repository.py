"""extract_repository: the symbols of every commit of a repository corpus, in one store of its
distinct symbol contents (crmatrix.versions.store), grown from the repository's previous
store (crmatrix.versions.bases): a commit whose files occurred before costs little more than its new
ones, which are parsed once ever (crmatrix.symbols.cache)."""

from __future__ import annotations

import logging
from pathlib import Path

from crmatrix import atomic
from crmatrix.corpora.languages import language_for
from crmatrix.corpora.pins.gitstore import BlobReader
from crmatrix.progress import Progress
from crmatrix.symbols import cache
from crmatrix.versions import bases
from crmatrix.versions import store as versioned
from crmatrix.versions.repository import GIT, commit_files

log = logging.getLogger(__name__)

KIND = "stores"  # bases: keyed by the extractor (what a content's symbols depend on)


def run(repository: Path, out: Path, stats: Path, cache_dir: Path) -> dict:
    """`stats`: how many files there are, distinct, taken from the previous store, served from
    the symbol cache and parsed."""
    commits = commit_files(repository)
    wanted = {pb for files in commits.values() for pb in files}
    key = cache.extractor_key()
    with bases.pick(cache_dir, KIND, key, len(wanted),
                    lambda d: len(wanted.intersection(map(tuple, atomic.read_json(d / versioned.FILES))))) as found:
        base = versioned.SymbolStore(found) if found else None
        base_files = base.files() if base else []
        held = wanted.intersection(base_files)
        symbol_cache = cache.SymbolCache(Path(cache_dir) / cache.SUBDIR)
        units: dict[tuple[str, str], list] = {}
        counts = {"files": sum(map(len, commits.values())), "distinct": len(wanted), "base": len(held), "unique": 0,
                  "cached": 0, "parsed": 0}
        # commit by commit, its files not seen yet (a path is once in a commit, as extract_blobs asks)
        with BlobReader(Path(repository) / GIT) as reader, Progress("symbols", len(commits), "commits") as progress:
            for _, files in sorted(commits.items()):
                new = [(p, b) for p, b in files if (p, b) not in units and (p, b) not in held]
                found_now, n = cache.extract_blobs(
                    [(p, b, lambda b=b: reader.read(b), language_for(p)) for p, b in new], symbol_cache)
                units.update({(p, b): found_now[p] for p, b in new})
                for k in ("unique", "cached", "parsed"):
                    counts[k] += n[k]
                progress.advance()
        meta = versioned.build(commits, units, Path(out), base)
    served = counts["base"] + counts["cached"]
    result = {**counts, "share_cached": round(served / (counts["base"] + counts["unique"]), 4) if wanted else None,
              "contents": meta["contents"], "occurrences": meta["occurrences"]}
    log.info("%d files of %d commits, %d distinct (path, blob): %d from the previous store, %d from the symbol "
             "cache, %d parsed", counts["files"], len(commits), len(wanted), counts["base"], counts["cached"],
             counts["parsed"])
    if bases.keep(out, cache_dir, KIND, key, meta["hash"]) and found and len(held) == len(base_files):
        bases.retire(found)  # after the block: its lock is let go
    atomic.write_json(Path(stats), result)
    return result
