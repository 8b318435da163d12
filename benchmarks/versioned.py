"""Versioned index benchmark, run by hand (not in CI): `.venv/bin/python benchmarks/versioned.py`.

A synthetic repository of sympy's shape (issue 29): 124 commits of 1,310 files, 29 symbols a
file (38k symbols a commit), each file changing every ten commits or so (about 16k distinct
blobs), each change rewriting a few of its definitions and shifting the lines of the rest.
Builds its symbol store and a versioned index (a fake 384-d embedder: the model is no part of
what is measured), then prints, and writes to benchmarks/results/versioned-<date>.md:

  1. the store's and the index's build time and size;
  2. a commit's engine view: time to open the index, and per commit the time to build its
     engine (target <= 0.2 s) and the memory that allocates (numpy's and Python's allocations,
     by tracemalloc) beside the size of the commit's vectors alone;
  3. query latency per method, the view against a plain engine of the same commit;
  4. that the view's hits equal the plain engine's on that commit (every method, 20 queries).
"""

from __future__ import annotations

import datetime
import hashlib
import itertools
import os
import platform
import random
import shutil
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np
from timing import new_result

from crmatrix import atomic
from crmatrix.engine import Engine, index, knobs
from crmatrix.engine.bm25 import BM25Index
from crmatrix.engine.embedtext import embedding_text
from crmatrix.engine.methods import METHODS
from crmatrix.symbols import Symbol
from crmatrix.versions import index as versioned
from crmatrix.versions.store import SymbolStore, build

COMMITS, FILES, PER_FILE, MEAN_VERSIONS, CHANGED = 124, 1310, 29, 12.5, 6
DIM = 384
SEED = 29
out_lines: list[str] = []


def say(line: str = "") -> None:
    print(line, flush=True)
    out_lines.append(line)


class Repo:
    """The synthetic repository: each path's versions, each version's symbols."""

    def __init__(self, seed: int):
        rng = random.Random(seed)
        self.words = [f"{rng.choice('bcdfghklmnprstvz')}{rng.choice('aeiou')}{rng.choice('bcdfghklmnprstvz')}"
                      f"{rng.choice('aeiou')}{n}" for n in range(20000)]
        self.cum = list(itertools.accumulate(1.0 / (r + 1) for r in range(len(self.words))))  # Zipf
        self.paths = [f"pkg{n % 40}/mod{n}.py" for n in range(FILES)]
        self.versions = [max(1, int(rng.expovariate(1 / MEAN_VERSIONS))) for _ in self.paths]
        self._cache: dict[str, list[Symbol]] = {}

    def commit(self, i: int) -> list[tuple[str, str]]:
        return [(p, f"{p}@{i * v // COMMITS}") for p, v in zip(self.paths, self.versions, strict=True)]

    def _text(self, rng: random.Random, n: int) -> str:
        return " ".join(rng.choices(self.words, cum_weights=self.cum, k=n))

    def _definition(self, rng: random.Random, path: str, k: int) -> dict:
        name = "_".join(rng.choices(self.words, cum_weights=self.cum, k=2))
        kind = "method" if k % 3 else "function"
        parent = f"Class{k // 3}" if kind == "method" else ""
        lines = [f"def {name}(self, {self._text(rng, 1)}):"]
        lines += [f"    {self._text(rng, rng.randint(3, 9))}" for _ in range(rng.randint(4, 20))]
        doc = self._text(rng, rng.randint(5, 15)) if rng.random() < 0.4 else ""
        return {"name": name, "kind": kind, "parent": parent, "path": path, "language": "python",
                "signature": lines[0][:-1], "doc": doc, "body": "\n".join(lines)}

    def symbols(self, path: str, blob: str) -> list[Symbol]:
        """Version v: version v - 1 with CHANGED definitions rewritten and a line inserted at the top."""
        if blob not in self._cache:
            version = int(blob.rsplit("@", 1)[1])
            rng = random.Random(f"{SEED}:{blob}")
            if version == 0:
                defs = [self._definition(rng, path, k) for k in range(PER_FILE)]
            else:
                defs = [{f: getattr(s, f) for f in ("name", "kind", "parent", "path", "language", "signature", "doc",
                                                    "body")} for s in self.symbols(path, f"{path}@{version - 1}")]
                for k in rng.sample(range(PER_FILE), CHANGED):
                    defs[k] = self._definition(rng, path, k)
            line, out = 1 + version, []
            for d in defs:
                end = line + d["body"].count("\n")
                out.append(Symbol(**d, start_line=line, end_line=end))
                line = end + 2
            self._cache[blob] = out
        return self._cache[blob]


class FakeEmbedder:
    dim = DIM

    def encode(self, texts, on_batch=None):
        return np.stack([vector(t) for t in texts])


def vector(text: str) -> np.ndarray:
    v = np.frombuffer(hashlib.shake_256(text.encode()).digest(DIM), dtype=np.uint8).astype(np.float32) - 127.5
    return v / np.linalg.norm(v)


def encode(queries: list[str]) -> np.ndarray:
    return np.stack([vector(q) for q in queries])


def main() -> None:
    date = datetime.date.today().isoformat()
    say(f"# Versioned index — {date}")
    say()
    say(f"{platform.node()}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the start "
        "(a shared machine: times are inflated by the load)")
    repo = Repo(SEED)
    work = Path(tempfile.mkdtemp(prefix="crmatrix-versioned-"))
    index.load_embedder = lambda model, model_dir, threads: FakeEmbedder()
    model_dir = work / "model"
    atomic.write_json(model_dir / "model.json", {"sha256": "b" * 64, "dim": DIM, "backend": "fake"})
    kn = knobs.resolve({"CODELENS_EMBED_HINT_AUTO": "0", "CODELENS_RANK_SPARSE_TERM_WEIGHT": "1"}, "python")

    store = store_and_index(repo, work, kn, model_dir)
    vindex, commits = commit_engines(store, work, kn, model_dir)
    against_plain(repo, store, vindex, commits[1], kn)
    shutil.rmtree(work)
    out = new_result(f"versioned-{date}")
    atomic.write_text(out, "\n".join(out_lines) + "\n")
    print(f"wrote {out}", file=sys.stderr)


def store_and_index(repo: Repo, work: Path, kn, model_dir: Path) -> SymbolStore:
    """The store of every commit and its versioned index built, timed and measured."""
    t = time.perf_counter()
    meta = build({f"c{i:03d}": repo.commit(i) for i in range(COMMITS)}, repo.symbols, work / "store")
    store_s = time.perf_counter() - t
    store = SymbolStore(work / "store")
    t = time.perf_counter()
    imeta = versioned.build(store, kn, model_dir, work / "cache", work / "index")
    index_s = time.perf_counter() - t
    size = lambda d: sum(f.stat().st_size for f in d.rglob("*") if f.is_file()) / 2**20  # noqa: E731
    say()
    say("## The store and the index")
    say()
    say(f"- {COMMITS} commits of {FILES} files, {meta['occurrences']:,} symbol occurrences, {meta['files']:,} "
        f"distinct files, {meta['contents']:,} distinct contents, {imeta['texts']:,} distinct embedding texts")
    say(f"- store: built in {store_s:.1f} s, {size(work / 'store'):.0f} MiB; index: built in {index_s:.1f} s "
        f"(fake embedder), {size(work / 'index'):.0f} MiB")
    return store


def commit_engines(store: SymbolStore, work: Path, kn, model_dir: Path) -> tuple[versioned.VersionedIndex, list[str]]:
    """The index opened, and a few commits' engines built from it: time and memory."""
    t = time.perf_counter()
    vindex = versioned.VersionedIndex(work / "index", store, kn, model_dir)
    open_s = time.perf_counter() - t
    commits = [f"c{i:03d}" for i in (0, 41, 82, 123)]
    walls, cpus, peaks = [], [], []
    for c in commits * 2:  # each commit twice: the first meets its pages cold
        t, p = time.perf_counter(), time.process_time()
        vindex.engine(c, encode_queries=encode)
        walls.append(time.perf_counter() - t)
        cpus.append(time.process_time() - p)
    for c in commits:  # apart: tracemalloc slows every allocation
        tracemalloc.start()
        vindex.engine(c, encode_queries=encode)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    n = len(store.occurrences(commits[0]))
    say()
    say("## A commit's engine")
    say()
    say(f"- opening the index (checksums verified): {open_s:.2f} s, once per job")
    say(f"- building a commit's engine ({n:,} symbols), commits {', '.join(commits)} twice over: wall "
        + ", ".join(f"{s:.3f}" for s in walls) + " s; CPU " + ", ".join(f"{s:.3f}" for s in cpus)
        + f" s (median wall {np.median(walls):.3f} s, CPU {np.median(cpus):.3f} s; target <= 0.2 s)")
    say(f"- memory allocated while building it (peak, tracemalloc: numpy's and Python's): median "
        f"{np.median(peaks) / 2**20:.0f} MiB, of which the commit's vectors are {n * DIM * 4 / 2**20:.0f} MiB")
    return vindex, commits


def against_plain(repo: Repo, store: SymbolStore, vindex: versioned.VersionedIndex, commit: str, kn) -> None:
    """Query latency of the commit's engine against a plain engine of its symbols, and their hits compared."""
    symbols = store.symbols_of(commit)
    view = vindex.engine(commit, encode_queries=encode)
    vectors, bm25 = np.stack([vector(embedding_text(s, kn)) for s in symbols]), BM25Index.build(symbols)
    t = time.perf_counter()
    plain = Engine(symbols, kn, vectors, encode, bm25=bm25)
    plain_s = time.perf_counter() - t
    rng = random.Random(1)
    queries = [" ".join(rng.choices(repo.words[:3000], k=rng.randint(2, 12))) for _ in range(20)]
    queries += [s.name for s in rng.sample(symbols, 5)]
    view.prepare(queries)
    plain.prepare(queries)
    say()
    say(f"## Queries on {commit}: p50 ms, view against plain")
    say()
    say("| method | view | plain |")
    say("|---|---|---|")
    equal = True
    for m in METHODS:
        lat = {}
        for name, eng in (("view", view), ("plain", plain)):
            ms = []
            for q in queries:
                t = time.perf_counter()
                eng.search(q, m, 10)
                ms.append((time.perf_counter() - t) * 1000)
            lat[name] = np.median(ms)
        equal &= all(view.search(q, m, 100) == plain.search(q, m, 100) for q in queries)
        say(f"| {m} | {lat['view']:.1f} | {lat['plain']:.1f} |")
    say()
    say(f"A plain engine of {commit} takes {plain_s:.2f} s to build from its symbols in memory, its vectors and "
        "BM25 given.")
    say()
    say(f"Hits of the view equal the plain engine's on {commit} ({len(symbols):,} symbols, every method, "
        f"{len(queries)} queries, top 100): {'yes' if equal else 'NO'}")


if __name__ == "__main__":
    main()
