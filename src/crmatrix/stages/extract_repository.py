"""extract_repository: the symbols of every commit of a repository corpus, in one store of its
distinct symbol contents (crmatrix.symbols.versioned), each distinct file parsed once ever
(crmatrix.symbols.cache: a commit whose files occurred before parses only its new ones)."""

from __future__ import annotations

import logging
from pathlib import Path

from crmatrix import atomic
from crmatrix.corpora.languages import language_for
from crmatrix.corpora.pins.gitstore import BlobReader
from crmatrix.corpora.repository import GIT, commit_files
from crmatrix.progress import Progress
from crmatrix.symbols import cache, versioned

log = logging.getLogger(__name__)


def run(repository: Path, out: Path, stats: Path, cache_dir: Path) -> dict:
    """`stats`: how many files there are, distinct, served from the cache and parsed."""
    commits = commit_files(repository)
    symbol_cache = cache.SymbolCache(Path(cache_dir) / cache.SUBDIR)
    units: dict[tuple[str, str], list] = {}
    counts = {"files": sum(map(len, commits.values())), "unique": 0, "cached": 0, "parsed": 0}
    # commit by commit, its files not seen yet (a path is once in a commit, as extract_blobs asks)
    with BlobReader(Path(repository) / GIT) as reader, Progress("symbols", len(commits), "commits") as progress:
        for _, files in sorted(commits.items()):
            new = [(p, b) for p, b in files if (p, b) not in units]
            found, n = cache.extract_blobs([(p, b, lambda b=b: reader.read(b), language_for(p)) for p, b in new],
                                           symbol_cache)
            units.update({(p, b): found[p] for p, b in new})
            for k in ("unique", "cached", "parsed"):
                counts[k] += n[k]
            progress.advance()
    meta = versioned.build(commits, units, Path(out))
    result = {**counts, "share_cached": round(counts["cached"] / counts["unique"], 4) if counts["unique"] else None,
              "contents": meta.get("contents"), "occurrences": meta.get("occurrences")}
    log.info("%d files of %d commits, %d distinct (path, blob): %d from the cache, %d parsed", counts["files"],
             len(commits), len(units), counts["cached"], counts["parsed"])
    atomic.write_json(Path(stats), result)
    return result
