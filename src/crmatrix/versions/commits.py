"""Any system that is not crmatrix's own engine (command, mcp, a plugin, an installed peer) on
a repository of many commits (a SWE-bench or history dataset): each commit's tree
(crmatrix.versions.trees), its index built once per distinct tree, the tasks asked at their commit.

`build_indexes` is the index job: the system's own index command once per distinct tree of
the repository's commits, into a cache keyed by the tree's content (`cache/TREE`) under the
index key (the system, its version, its index-time settings), so a run that adds a commit
indexes that commit's tree alone, and commits with the same candidate files share one index.
Its output lists each tree's commits, index and what it cost (INDEX_INFO).

`CommitTrees` is the system an evaluation runs: on `select` (crmatrix.evaluation.evaluate asks
per commit) it starts the system anew on that commit's tree, its index and its own HOME
(`home/TREE`), and gives the commit's symbols (crmatrix.versions.store), which its hits
resolve against as on any corpus. It records per tree what the queries took.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import numpy as np

from crmatrix import CrmatrixError, atomic, integrity, versions
from crmatrix.systems.base import System, SystemContext
from crmatrix.systems.guard import GRACE_S
from crmatrix.versions import trees
from crmatrix.versions.repository import commit_files

INDEX_INFO = "crmatrix-index.json"  # as an external system's index of one tree names its own
FORMAT = "crmatrix-tree-indexes/1"


def _bytes(directory: Path) -> int:
    return sum(f.stat().st_size for f in Path(directory).rglob("*") if f.is_file() and not f.is_symlink())


def build_indexes(build, repository: Path, out: Path, cache: Path) -> dict:
    """`build(tree, index_dir, tree_key)` builds one tree's index (returning its info, with
    `seconds`); a tree whose index the cache holds, whole (integrity-checked), is not built again.
    Writes `out/INDEX_INFO`: {format, built, reused, trees: {TREE: {commits, index, seconds, bytes,
    built}}}, the index paths as given (relative to the workflow's directory)."""
    commits, listed = commit_files(repository), {}
    built = reused = 0
    for key, shared in trees.commit_trees(repository).items():
        index = Path(cache) / key
        try:
            integrity.verify(index)
            info, fresh = atomic.read_json(index / INDEX_INFO), False
        except (CrmatrixError, FileNotFoundError):
            tree = trees.materialize(repository, commits[shared[0]])
            try:
                info, fresh = build(tree, index, key), True
            except CrmatrixError as e:  # which of the repository's trees, and its commits
                named = ", ".join(c[:12] for c in shared)
                raise CrmatrixError(f"{Path(repository).name}: tree {key} (commit {named}): {e}") from None
        built, reused = built + fresh, reused + (not fresh)
        listed[key] = {"commits": shared, "index": str(index), "seconds": info["seconds"],
                       "bytes": _bytes(index), "built": fresh}
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    doc = {"format": FORMAT, "built": built, "reused": reused, "trees": listed}
    atomic.write_json(out / INDEX_INFO, doc)
    integrity.record(out)
    return doc


def tree_indexes(index_dir: Path) -> dict[str, dict]:
    """Tree key -> its entry of the index job's listing (`build_indexes`)."""
    integrity.verify(index_dir)
    doc = atomic.read_json(Path(index_dir) / INDEX_INFO)
    if doc.get("format") != FORMAT:
        raise CrmatrixError(f"{index_dir}: not an index of a repository's trees (expected format {FORMAT}, "
                            f"got {doc.get('format')!r}); delete it and run again")
    return doc["trees"]


class CommitTrees(System):
    """The system `cls` started on one commit's tree at a time (see the module)."""

    def __init__(self, cls: type[System], ctx: SystemContext):
        super().__init__(ctx)
        from crmatrix.versions.store import SymbolStore

        self.cls = cls
        # read once, at the start: a tool (re)started inside a call (an MCP server) may take its start's time too
        self.SELF_TIMED = cls.SELF_TIMED
        self.grace_s = cls.grace_s or GRACE_S + float(ctx.options.get("start_timeout_s", 0))
        self.repository = Path(ctx.corpus_dir)
        self.commits = commit_files(self.repository)
        self.store = SymbolStore(ctx.store_dir)
        self.indexes = tree_indexes(ctx.index_dir) if ctx.index_dir is not None else None
        self.inner: System | None = None
        self.key: str | None = None
        self._queries: list[str] = []
        self._costs: dict[str, dict] = {}  # tree -> its commits asked and the queries' seconds
        self._provenance: dict = {}

    # what evaluate reads of the system, the running one's
    @property
    def RESPONSE(self) -> str:
        return self.inner.RESPONSE if self.inner is not None else self.cls.RESPONSE

    @property
    def batch_size(self) -> int | None:
        return self.inner.batch_size if self.inner is not None else None

    def prepare(self, queries: list[str]) -> None:
        self._queries = list(queries)

    def select(self, corpus: str):
        """The system started on the tree of the version `corpus` names (a task's corpus), and its symbols."""
        commit = versions.commit_of(corpus)
        if commit not in self.commits:
            raise CrmatrixError(f"{self.repository}: holds no commit {commit} (task corpus {corpus!r})")
        files = self.commits[commit]
        key = trees.tree_key(files)
        symbols = self.store.symbols_of(commit)
        self._costs.setdefault(key, {"commits": [], "query_s": []})["commits"].append(commit)
        if key != self.key:
            self._stop()
            self._start(key, files, symbols)
        return symbols

    def _start(self, key: str, files: list[tuple[str, str]], symbols) -> None:
        index = None
        if self.indexes is not None:
            if key not in self.indexes:
                raise CrmatrixError(f"{self.ctx.index_dir}: no index of tree {key} (made before its commits were "
                                    "fetched?); delete it and run again")
            index = Path(self.indexes[key]["index"])
        home = Path(self.ctx.home_dir) / key if self.ctx.home_dir is not None else None
        ctx = dataclasses.replace(self.ctx, corpus_dir=trees.materialize(self.repository, files),
                                  symbols=symbols, index_dir=index, home_dir=home, store_dir=None)
        self.inner = self.cls(ctx)
        self.key = key
        self.inner.prepare(self._queries)
        self._provenance = self.inner.provenance()

    def _stop(self) -> None:
        inner, self.inner = self.inner, None
        if inner is not None:  # a write into its tree stops the job (crmatrix.systems.isolation)
            inner.close()

    def _timed(self, fn, *args):
        spent, t0 = self._costs[self.key]["query_s"], time.perf_counter()  # the tree asked, whatever comes next
        try:
            return fn(*args)
        finally:
            spent.append(time.perf_counter() - t0)

    def search(self, query: str, method: str, k: int):
        return self._timed(self.inner.search, query, method, k)

    def search_batch(self, queries: list[str], method: str, k: int):
        return self._timed(self.inner.search_batch, queries, method, k)

    def granularity(self, method: str) -> str | None:
        return self.inner.granularity(method) if self.inner is not None else super().granularity(method)

    def calls(self, direction: str, symbol: str, file_suffix: str | None):
        return self.inner.calls(direction, symbol, file_suffix)

    def provenance(self) -> dict:
        """The system's own record, and per tree asked: its commits, its index's cost (seconds,
        bytes, whether this run's index job built it) and its calls' p50/p95 in ms."""
        if not self._costs:
            return dict(self._provenance)
        per_tree = {}
        for key, cost in sorted(self._costs.items()):
            ms = np.asarray(cost["query_s"], dtype=float) * 1000
            entry = {"commits": sorted(set(cost["commits"])), "calls": int(ms.size),
                     "query_ms": {"p50": round(float(np.percentile(ms, 50)), 3) if ms.size else 0.0,
                                  "p95": round(float(np.percentile(ms, 95)), 3) if ms.size else 0.0}}
            if self.indexes is not None:
                entry["index"] = {k: self.indexes[key][k] for k in ("seconds", "bytes", "built")}
            per_tree[key] = entry
        return {**self._provenance, "trees": per_tree}

    def close(self) -> None:
        self._stop()

