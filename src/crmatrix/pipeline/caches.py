"""What the embedding and index caches hold, which runs use them, and freeing space safely.

- The embedding cache, `{cache_dir}/embeddings/<model sha256>/*.emb` (crmatrix.embed.cache).
  An entry is *used* when an index under results/index holds its text (the index's
  texts.jsonl), or a run's query embedded with that model is its text. Its age is the mtime
  of the newest shard holding it.
- The index cache, `results/index/{corpus}/{system}/{key}/`. A run uses an index when both
  record the same corpus and system and the index serves the run's settings, checked as the
  index's loader checks them: the builtin engine's model sha256 and index-time knobs, an
  external system's index command and the arm variables it sees. An index was *last used*
  at the newest of its build (its meta file's mtime) and the runs using it (their mtimes).
- The builds kept to grow the next one from (and a corpus's BM25, kept for its other indexes:
  kind `bm25`), `{cache_dir}/bases/<kind>/<key>/<name>/` (crmatrix.versions.bases), hard links
  where they can be: the bytes that removing one frees are its files no result links to. It was
  last used when it was kept or a build last grew from it (its mtime).
- A repository corpus's commits' trees and an external tool's indexes of them
  (crmatrix.versions.treecaches).

Eviction refuses while a Snakemake run holds its lock, since a running job may be reading
what it would delete. An index directory is renamed out of the way before it is deleted, so
a half-deleted one never looks like an index; embedding entries are dropped by rewriting
the model's shards (`EmbeddingCache.rewrite`). A Snakemake run after an eviction rebuilds
the indexes it needs, and re-evaluates the runs that read them.
"""

from __future__ import annotations

import os
import re
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from crmatrix import CrmatrixError, atomic
from crmatrix.config.settings import SystemSpec
from crmatrix.embed.cache import SUBDIR, EmbeddingCache, text_sha
from crmatrix.engine.knobs import table
from crmatrix.systems.external import INDEX_INFO, ExternalSystem
from crmatrix.versions import bases, treecaches

INDEX_META = "meta.json"  # what the builtin engine's index builder writes (crmatrix.engine.index)
_UNITS = {"d": 86400, "h": 3600, "m": 60, "s": 1}
_AGE = re.compile(r"(\d+)([dhms])")


def parse_age(text: str) -> float:
    """Seconds in `7d`, `12h`, `30m` or `45s`."""
    m = _AGE.fullmatch(text.strip())
    if not m:
        raise CrmatrixError(f"--older-than {text!r}: expected a whole number and a unit d, h, m or s "
                            "(e.g. 7d, 12h, 30m)")
    return float(int(m.group(1)) * _UNITS[m.group(2)])


def age(seconds: float) -> str:
    """A duration in its largest whole unit: 9d, 5h, 12m, 40s."""
    seconds = max(0, int(seconds))
    for unit, n in _UNITS.items():
        if seconds >= n or unit == "s":
            return f"{seconds // n}{unit}"
    raise AssertionError("unreachable")


def size(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    for unit in ("KiB", "MiB", "GiB"):
        n /= 1024
        if n < 1024 or unit == "GiB":
            return f"{n:.1f} {unit}"
    raise AssertionError("unreachable")


def held_locks(workdir: Path) -> list[Path]:
    """The lock files of a Snakemake run on `workdir` (empty when none holds it)."""
    locks = Path(workdir) / ".snakemake" / "locks"
    return sorted(p for p in locks.iterdir() if p.is_file()) if locks.is_dir() else []


def _file_stats(path: Path) -> Iterator[os.stat_result]:
    """The stats of the files under `path` (a file removed during the walk left out)."""
    for root, _, files in os.walk(path):
        for f in files:
            try:
                yield os.lstat(os.path.join(root, f))
            except FileNotFoundError:
                continue


def _tree_bytes(path: Path) -> int:
    return sum(st.st_size for st in _file_stats(path))


def _footprint(base: Path) -> dict[str, int]:
    """A kept build's bytes, and the bytes removing it frees (its files no result links to as
    well: `unshared_bytes`), from one walk."""
    total = unshared = 0
    for st in _file_stats(base):
        total += st.st_size
        unshared += st.st_size if st.st_nlink == 1 else 0
    return {"bytes": total, "unshared_bytes": unshared}


@dataclass
class RunFile:
    name: str  # dataset/system/arm
    mtime: float
    record: dict

    @property
    def provenance(self) -> dict:
        return self.record.get("provenance") or {}

    def corpus(self) -> str | None:
        return (self.provenance.get("corpus") or {}).get("name")

    def model_sha(self) -> str | None:
        return (self.provenance.get("model") or {}).get("sha256")

    def queries(self) -> set[str]:
        return {q["query"] for m in self.record.get("methods", {}).values() for q in m.get("queries", [])}


def read_runs(results: Path) -> list[RunFile]:
    """Every run under results/runs; a file that is not a readable run is skipped with a warning."""
    out = []
    for path in sorted((Path(results) / "runs").glob("*/*/*.json")):
        try:
            record = atomic.read_json(path)
            mtime = path.stat().st_mtime
        except (CrmatrixError, OSError) as e:
            print(f"crmatrix: cache: skipped {path}: {e}", file=sys.stderr)
            continue
        if isinstance(record, dict):
            out.append(RunFile("/".join(path.with_suffix("").parts[-3:]), mtime, record))
    return out


@dataclass
class Index:
    path: Path
    corpus: str
    system: str
    key: str
    bytes: int
    built: float
    meta: dict | None  # the builtin's meta.json
    info: dict | None  # an external system's crmatrix-index.json
    runs: list[RunFile] = field(default_factory=list)

    @property
    def model_sha(self) -> str | None:
        return self.meta["model"]["sha256"] if self.meta else None

    @property
    def last_used(self) -> float:
        return max([self.built, *(r.mtime for r in self.runs)])

    def serves(self, run: RunFile) -> bool:
        prov = run.provenance
        if run.corpus() != self.corpus or (prov.get("system") or {}).get("name") != self.system:
            return False
        if self.meta is not None:
            knob_values = (prov.get("system_run") or {}).get("knobs")
            return (knob_values is not None and run.model_sha() == self.model_sha
                    and table.index_fields(knob_values) == table.index_fields(self.meta["knobs"]))
        if self.info is not None:
            spec = SystemSpec(prov["system"]["type"], prov["system"].get("options") or {})
            env = (prov.get("arm") or {}).get("env") or {}
            return (spec.options.get("index") == self.info.get("argv")
                    and ExternalSystem.index_env(spec, env) == self.info.get("env"))
        return False

    def texts(self) -> set[str]:
        """The text sha256 of every symbol's embedding text (builtin indexes only)."""
        texts = self.path / "texts.jsonl"
        return {row["text_sha"] for row in atomic.read_jsonl(texts)} if self.meta and texts.is_file() else set()


def read_indexes(results: Path, runs: list[RunFile]) -> list[Index]:
    """Every finished index under results/index (staging directories, hidden, are not)."""
    out = []
    for path in sorted((Path(results) / "index").glob("[!.]*/[!.]*/[!.]*")):
        if not path.is_dir():
            continue
        meta_file, info_file = path / INDEX_META, path / INDEX_INFO
        meta = atomic.read_json(meta_file) if meta_file.is_file() else None
        info = atomic.read_json(info_file) if info_file.is_file() and meta is None else None
        marker = meta_file if meta is not None else info_file if info is not None else path
        corpus, system, key = path.parts[-3:]
        ix = Index(path, corpus, system, key, _tree_bytes(path), marker.stat().st_mtime, meta, info)
        ix.runs = [r for r in runs if ix.serves(r)]
        out.append(ix)
    return out


def model_names(results: Path) -> dict[str, list[str]]:
    """Model sha256 -> the names it is prepared under in results/models."""
    names: dict[str, list[str]] = {}
    for meta in sorted((Path(results) / "models").glob("*/model.json")):
        sha = atomic.read_json(meta).get("sha256")
        if sha:
            names.setdefault(sha, []).append(meta.parent.name)
    return names


def _query_refs(runs: list[RunFile], model_sha: str) -> set[str]:
    return {text_sha(q) for r in runs if r.model_sha() == model_sha for q in r.queries()}


def info(results: Path, cache_dir: Path) -> dict:
    """Everything `crmatrix cache info` shows, as data (bytes exact, times as mtimes)."""
    runs = read_runs(results)
    indexes = read_indexes(results, runs)
    store = EmbeddingCache(Path(cache_dir) / SUBDIR)
    names = model_names(results)
    models = []
    for model in store.models():
        shards = store.shards(model)
        by_index = set().union(*(ix.texts() for ix in indexes if ix.model_sha == model))
        by_queries = _query_refs(runs, model)
        entries = store.keys(model)
        temporaries = store.temporaries(model)
        models.append({
            "model": model, "names": names.get(model, []), "entries": len(entries),
            "shards": sum(1 for s in shards if s.count is not None),
            "bytes": sum(s.bytes for s in shards) + sum(_file_bytes(t) for t in temporaries),
            "used_by_indexes": len(entries & by_index), "used_by_queries": len(entries & by_queries - by_index),
            "unused": len(entries - by_index - by_queries),
            "indexes": sum(1 for ix in indexes if ix.model_sha == model),
            "invalid_shards": [{"path": str(s.path), "bytes": s.bytes, "problem": s.problem}
                               for s in shards if s.count is None],
            "temporaries": len(temporaries)})
    return {
        "embeddings": {"dir": str(store.root), "models": models},
        "indexes": {"dir": str(Path(results) / "index"),
                    "entries": [{"path": str(ix.path), "corpus": ix.corpus, "system": ix.system, "key": ix.key,
                                 "bytes": ix.bytes, "built": ix.built, "last_used": ix.last_used,
                                 "runs": [r.name for r in ix.runs]} for ix in indexes]},
        "bases": {"dir": str(Path(cache_dir) / bases.ROOT),
                  "entries": [{"path": str(b), "kind": b.parent.parent.name, "key": b.parent.name, "name": b.name,
                               **_footprint(b),
                               "last_used": b.stat().st_mtime} for b in bases.kept(cache_dir)]},
        **treecaches.info(results),
    }


def _file_bytes(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def _plural(n: int, word: str, words: str | None = None) -> str:
    return f"{n:,} {word if n == 1 else words or word + 's'}"


def format_info(report: dict, now: float) -> list[str]:
    emb, idx = report["embeddings"], report["indexes"]
    models = emb["models"]
    lines = [f"embedding cache {emb['dir']}: {_plural(len(models), 'model')}, "
             f"{_plural(sum(m['entries'] for m in models), 'entry', 'entries')}, "
             f"{size(sum(m['bytes'] for m in models))} in {_plural(sum(m['shards'] for m in models), 'shard')}"]
    for m in models:
        named = f" ({', '.join(m['names'])})" if m["names"] else ""
        lines.append(f"  model {m['model'][:12]}{named}: {m['entries']:,} entries in {_plural(m['shards'], 'shard')}, "
                     f"{size(m['bytes'])}; "
                     f"{m['used_by_indexes']:,} used by {_plural(m['indexes'], 'index', 'indexes')}, "
                     f"{m['used_by_queries']:,} by runs' queries, {m['unused']:,} unused")
        for bad in m["invalid_shards"]:
            lines.append(f"    invalid shard {bad['path']} ({size(bad['bytes'])}): {bad['problem']}")
        if m["temporaries"]:
            lines.append(f"    {_plural(m['temporaries'], 'temporary file')} of writers running or killed")
    entries = idx["entries"]
    lines.append(f"index cache {idx['dir']}: {_plural(len(entries), 'index', 'indexes')}, "
                 f"{size(sum(e['bytes'] for e in entries))}")
    for e in entries:
        runs = f"{_plural(len(e['runs']), 'run')}: {', '.join(e['runs'])}" if e["runs"] else "no run"
        lines.append(f"  {e['corpus']}/{e['system']}/{e['key']}  {size(e['bytes'])}, last used "
                     f"{age(now - e['last_used'])} ago, used by {runs}")
    kept = report["bases"]["entries"]
    lines.append(f"builds kept to grow from {report['bases']['dir']}: {_plural(len(kept), 'build')}, "
                 f"{size(sum(b['bytes'] for b in kept))}, {size(sum(b['unshared_bytes'] for b in kept))} of it linked "
                 "from no result")
    for b in kept:
        lines.append(f"  {b['kind']}/{b['key'][:12]}/{b['name'][:12]}  {size(b['bytes'])} "
                     f"({size(b['unshared_bytes'])} linked from no result), last used {age(now - b['last_used'])} ago")
    return lines + _format_trees(report, now)


def _format_trees(report: dict, now: float) -> list[str]:
    t, entries = report["trees"], report["tree_indexes"]["entries"]
    lines = [f"commits' trees {t['dir']}: {_plural(len(t['entries']), 'tree')}, "
             f"{size(sum(c['bytes'] for c in t['corpora']))} (a file linked from many trees counted once)"]
    lines += [f"  {c['corpus']}: {_plural(c['trees'], 'tree')}, {_plural(c['blobs'], 'blob')}, {size(c['bytes'])}"
              for c in t["corpora"]]
    lines.append(f"indexes of trees {report['tree_indexes']['dir']}: {_plural(len(entries), 'index', 'indexes')}, "
                 f"{size(sum(e['bytes'] for e in entries))}")
    return lines + [f"  {e['corpus']}/{e['system']}/{e['key']}/{e['tree']}  {size(e['bytes'])}, last used "
                    f"{age(now - e['last_used'])} ago{'' if e['whole'] else ', incomplete (being built, or killed)'}"
                    for e in entries]


def evict(results: Path, cache_dir: Path, workdir: Path, *, older_than: float | None = None,
          corpus: str | None = None, everything: bool = False, now: float | None = None) -> dict:
    """Remove the indexes the filters select (all given filters must hold), then the embedding
    entries no remaining index or run uses that were only used by the removed indexes, or,
    with `older_than`, are older than it; `everything` removes all of both caches. The
    commits' trees and the indexes of trees the filters select go too (crmatrix.versions.treecaches)."""
    locks = held_locks(workdir)
    if locks:
        raise CrmatrixError(f"{Path(workdir) / '.snakemake' / 'locks'}: a Snakemake run holds its lock "
                            f"({', '.join(p.name for p in locks)}); let it finish, or if it was killed, "
                            "run `snakemake --unlock` first")
    if older_than is None and corpus is None and not everything:
        raise CrmatrixError("cache evict: say what to free: --older-than D (e.g. 7d), --corpus C, or --all")
    now = time.time() if now is None else now
    runs = read_runs(results)
    indexes = read_indexes(results, runs)

    def chosen_by(name: str, last_used: float) -> bool:
        return everything or ((corpus is None or name == corpus)
                              and (older_than is None or now - last_used > older_than))

    trees = treecaches.evict(results, chosen_by)  # and the listings naming an index of a tree removed

    def chosen(ix: Index) -> bool:
        return chosen_by(ix.corpus, ix.last_used) or str(ix.path) in trees["listings"]

    evicted = [ix for ix in indexes if chosen(ix)]
    remaining = [ix for ix in indexes if not chosen(ix)]
    texts = {ix.path: ix.texts() for ix in indexes}  # read before the removal

    def refs(group: list[Index], model: str) -> set[str]:
        return set().union(*(texts[ix.path] for ix in group if ix.model_sha == model))

    for ix in evicted:
        atomic.remove_tree(ix.path)
    store = EmbeddingCache(Path(cache_dir) / SUBDIR)
    rewrites = []
    for model in store.models():
        freed_refs = refs(evicted, model)
        if not (everything or freed_refs or older_than is not None):
            continue
        used = refs(remaining, model) | _query_refs(runs, model)

        def keep(sha: str, mtime: float, used: set[str] = used, freed_refs: set[str] = freed_refs) -> bool:
            if everything:
                return False
            if sha in used:
                return True
            return sha not in freed_refs and (older_than is None or now - mtime <= older_than)

        rewrites.append(store.rewrite(model, keep=keep, now=now))
        if not any(store.model_dir(model).iterdir()):
            store.model_dir(model).rmdir()  # no job runs (no lock held): nothing writes into it
    kept = [b for b in bases.kept(cache_dir) if everything or (older_than is not None and now - b.stat().st_mtime >
                                                               older_than)]
    freed_kept = []
    for b in kept:
        freed = _footprint(b)["unshared_bytes"]
        if bases.retire(b):  # one a build of another project is reading stays
            freed_kept.append(freed)
    return {"indexes": [{"path": str(ix.path), "bytes": ix.bytes, "last_used": ix.last_used,
                         "runs": [r.name for r in ix.runs]} for ix in evicted],
            "embeddings": rewrites, "bases": {"removed": len(freed_kept), "freed_bytes": sum(freed_kept)},
            "trees": trees["trees"], "tree_indexes": trees["tree_indexes"],
            "freed_bytes": sum(ix.bytes for ix in evicted) + sum(r["freed_bytes"] for r in rewrites) + sum(freed_kept)
            + trees["freed_bytes"]}


def format_evict(report: dict, now: float, names: dict[str, list[str]]) -> list[str]:
    lines = [f"evicted {e['path']} ({size(e['bytes'])}, last used {age(now - e['last_used'])} ago, "
             f"used by {_plural(len(e['runs']), 'run')})" for e in report["indexes"]]
    lines += [f"evicted {e['path']} ({size(e['bytes'])}, last used {age(now - e['last_used'])} ago)"
              for e in [*report["tree_indexes"], *report["trees"]]]
    for r in report["embeddings"]:
        named = f" ({', '.join(names[r['model']])})" if names.get(r["model"]) else ""
        lines.append(f"embeddings of model {r['model'][:12]}{named}: dropped "
                     f"{r['entries_before'] - r['entries_kept']:,} of {r['entries_before']:,} entries, "
                     f"{r['shards_before']} shards merged into {1 if r['entries_kept'] else 0}, "
                     f"freed {size(r['freed_bytes'])}")
    if report["bases"]["removed"]:
        lines.append(f"builds kept to grow from: removed {report['bases']['removed']}, freed "
                     f"{size(report['bases']['freed_bytes'])}")
    lines.append(f"freed {size(report['freed_bytes'])} ({report['freed_bytes']:,} bytes)")
    return lines


def compact(cache_dir: Path) -> list[dict]:
    """Merge each model's shards into one; safe while jobs read and write the cache."""
    store = EmbeddingCache(Path(cache_dir) / SUBDIR)
    return [store.rewrite(model) for model in store.models()]
