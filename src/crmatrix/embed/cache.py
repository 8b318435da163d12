"""A content-addressed embedding cache that many jobs on many machines share without locks.

Vectors are keyed by (model sha256, text sha256): an index rebuilt with other knob settings
embeds only the texts that actually changed. The cache must stay correct on a network
filesystem (NFS, Lustre), where SQLite's and fcntl's locking cannot be trusted, so nothing
in it is ever modified in place:

- every write is one new immutable *shard* file, `<root>/<model>/<sha256 of its bytes>.emb`,
  written under a temporary name in the same directory, fsynced, then renamed (atomic);
- a reader merges every shard of the model, and trusts one only if its bytes hash to its
  name and its header names this model and matches its length: a torn, truncated or
  foreign shard is skipped (its texts are embedded again), never read;
- two jobs that embed the same text both store it; the shard first in name order wins, so
  every reader of the same shards gets the same vector;
- `compact` merges a model's shards into one and only then deletes the ones it merged, so a
  reader running meanwhile finds every entry in the old shards or in the new one.

Shard layout (little-endian): magic `CRMXEMB1`, the sha256 of the model id (32 bytes),
dim (u32), count (u32); then `count` raw text sha256 digests in ascending order; then
`count` x `dim` float32 vectors in the same order.
"""

from __future__ import annotations

import hashlib
import os
import re
import struct
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from crmatrix import CrmatrixError, atomic
from crmatrix.embed.backends import Embedder
from crmatrix.progress import Progress

SUBDIR = "embeddings"  # the embedding cache's directory under the configured cache_dir
SUFFIX = ".emb"
_MAGIC = b"CRMXEMB1"
_HEADER = struct.Struct("<8s32sII")
_KEY_BYTES = 32
_READ_CHUNK = 1 << 20
# A temporary file older than this is a killed writer's (a shard takes seconds to write).
STALE_TMP_S = 3600.0
# A shard can vanish under a reader when `compact` replaces it; the reader looks again this often.
_RELISTS = 3
_MODEL_ID = re.compile(r"[0-9A-Za-z][0-9A-Za-z_.-]*")
_NONE = np.zeros(0, dtype=f"S{_KEY_BYTES}")  # `wanted` that takes no vectors


def text_sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class ShardInfo:
    path: Path
    bytes: int
    count: int | None  # None: not a valid shard of its model (skipped by every reader)
    problem: str | None = None


class _Invalid(Exception):
    """A shard that must not be trusted: the reason says why."""


def _model_digest(model_sha: str) -> bytes:
    return hashlib.sha256(model_sha.encode("utf-8")).digest()


def shard_bytes(model_sha: str, items: dict[str, np.ndarray]) -> bytes:
    """The bytes of one shard holding `items` (text sha -> vector); equal items, equal bytes."""
    keys = sorted(items)
    vectors = [np.ascontiguousarray(items[k], dtype="<f4").reshape(-1) for k in keys]
    dims = {v.size for v in vectors}
    if len(dims) != 1 or 0 in dims:
        raise CrmatrixError(f"embedding cache: vectors of one model must share one non-zero width, got {sorted(dims)}")
    digests = b"".join(bytes.fromhex(k) for k in keys)
    if len(digests) != _KEY_BYTES * len(keys):
        raise CrmatrixError("embedding cache: keys must be sha256 hex digests (text_sha)")
    header = _HEADER.pack(_MAGIC, _model_digest(model_sha), dims.pop(), len(keys))
    return header + digests + np.stack(vectors).tobytes()


def _read_exact(f, n: int, hasher) -> bytes:
    data = f.read(n)
    if len(data) != n:
        raise _Invalid(f"ends after {f.tell()} bytes")
    hasher.update(data)
    return data


def _read_shard(path: Path, model_sha: str, wanted: np.ndarray | None) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """(its keys as raw digests, the vectors of those among `wanted` (sorted raw digests; None: all)).

    One streaming pass, memory bounded by the rows taken: the whole file is hashed on the way
    and nothing is returned unless the hash equals the file's name.
    """
    hasher = hashlib.sha256()
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        magic, model, dim, count = _HEADER.unpack(_read_exact(f, _HEADER.size, hasher))
        if magic != _MAGIC:
            raise _Invalid("not an embedding shard")
        if model != _model_digest(model_sha):
            raise _Invalid("holds another model's vectors")
        if dim == 0 or size != _HEADER.size + count * (_KEY_BYTES + 4 * dim):
            raise _Invalid(f"is {size} bytes, but its header says {count} vectors of {dim} floats")
        keys = np.frombuffer(_read_exact(f, count * _KEY_BYTES, hasher), dtype=f"S{_KEY_BYTES}")
        take = np.arange(count) if wanted is None else _among(keys, wanted)
        rows_per_read = max(1, _READ_CHUNK // (4 * dim))
        found: dict[str, np.ndarray] = {}
        for start in range(0, count, rows_per_read):
            n = min(rows_per_read, count - start)
            block = np.frombuffer(_read_exact(f, n * 4 * dim, hasher), dtype="<f4").reshape(n, dim)
            lo, hi = np.searchsorted(take, [start, start + n])
            for i in take[lo:hi]:
                found[_hex(keys[i])] = block[i - start].astype(np.float32)
    if hasher.hexdigest() != path.name[:-len(SUFFIX)]:
        raise _Invalid("its bytes do not hash to its name (torn or altered)")
    return keys, found


def _hex(digest: bytes) -> str:
    # numpy's S dtype drops trailing NUL bytes of a digest on the way out
    return digest.ljust(_KEY_BYTES, b"\0").hex()


def _among(keys: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """Ascending indices of the keys that are in `wanted` (both sorted)."""
    if not len(wanted):
        return np.zeros(0, dtype=np.int64)
    pos = np.minimum(np.searchsorted(wanted, keys), len(wanted) - 1)
    return np.flatnonzero(wanted[pos] == keys)


def _warn(path: Path, reason: str) -> None:
    print(f"crmatrix: embedding cache: skipped {path}: {reason}; its texts are embedded again", file=sys.stderr)


class EmbeddingCache:
    """Vectors by (model_sha, text_sha), as immutable shards under `root/<model_sha>/`."""

    def __init__(self, root: Path):
        self.root = Path(root)

    def model_dir(self, model_sha: str) -> Path:
        if not _MODEL_ID.fullmatch(model_sha):
            raise CrmatrixError(f"embedding cache: model id {model_sha!r} is not a file name (expected a sha256)")
        return self.root / model_sha

    def models(self) -> list[str]:
        if not self.root.is_dir():
            return []
        return sorted(p.name for p in self.root.iterdir() if p.is_dir() and _MODEL_ID.fullmatch(p.name))

    def _shard_paths(self, model_sha: str) -> list[Path]:
        d = self.model_dir(model_sha)
        # Temporary files start with a dot and end in .tmp: never listed, so never half-read.
        return sorted(d.glob(f"[!.]*{SUFFIX}")) if d.is_dir() else []

    def get_many(self, model_sha: str, text_shas: Iterable[str]) -> dict[str, np.ndarray]:
        """The stored vectors among text_shas. Shards are read in name order and the first
        holding a key wins; an invalid shard is skipped with a warning on stderr."""
        wanted = np.array(sorted({bytes.fromhex(s) for s in text_shas}), dtype=f"S{_KEY_BYTES}")
        found: dict[str, np.ndarray] = {}
        for _, _, got in self._valid(model_sha, wanted, until=lambda: len(found) == len(wanted)):
            for k, v in got.items():
                found.setdefault(k, v)
        return found

    def _valid(self, model_sha: str, wanted: np.ndarray | None, until: Callable[[], bool] = lambda: False):
        """(path, keys, vectors among wanted) of each valid shard in name order, until
        `until()` holds. A shard that vanished (compacted away meanwhile) has its entries in
        a newer shard: the directory is listed again to find it."""
        seen: set[Path] = set()
        for _ in range(_RELISTS):
            vanished = False
            for path in self._shard_paths(model_sha):
                if until():
                    return
                if path in seen:
                    continue
                seen.add(path)
                try:
                    keys, got = _read_shard(path, model_sha, wanted)
                except FileNotFoundError:
                    vanished = True
                    continue
                except _Invalid as e:
                    _warn(path, str(e))
                    continue
                yield path, keys, got
            if not vanished:
                return

    def put_many(self, model_sha: str, items: dict[str, np.ndarray]) -> Path | None:
        """Store all items as one new shard (all or nothing); None when there are none."""
        if not items:
            return None
        data = shard_bytes(model_sha, items)
        path = self.model_dir(model_sha) / f"{atomic.sha256_bytes(data)}{SUFFIX}"
        atomic.write_bytes(path, data)
        return path

    def shards(self, model_sha: str) -> list[ShardInfo]:
        """Every shard file of the model, checked (`count` None and a `problem` if invalid)."""
        out = []
        for path in self._shard_paths(model_sha):
            try:
                st = path.stat()
                keys, _ = _read_shard(path, model_sha, _NONE)
                out.append(ShardInfo(path, st.st_size, len(keys)))
            except FileNotFoundError:
                continue
            except _Invalid as e:
                out.append(ShardInfo(path, st.st_size, None, str(e)))
        return out

    def keys(self, model_sha: str) -> set[str]:
        """The text sha256 of every valid entry of the model, without reading its vectors."""
        return {_hex(k) for _, keys, _ in self._valid(model_sha, _NONE) for k in keys}

    def entries(self, model_sha: str) -> tuple[dict[str, np.ndarray], dict[str, float]]:
        """Every valid entry of the model (first shard in name order wins) and, per entry,
        the newest mtime among the shards holding it (its age for `evict --older-than`)."""
        vectors: dict[str, np.ndarray] = {}
        mtimes: dict[str, float] = {}
        for path, _, got in self._valid(model_sha, None):
            try:
                mtime = path.stat().st_mtime
            except FileNotFoundError:
                continue
            for k, v in got.items():
                vectors.setdefault(k, v)
                mtimes[k] = max(mtimes.get(k, 0.0), mtime)
        return vectors, mtimes

    def temporaries(self, model_sha: str) -> list[Path]:
        d = self.model_dir(model_sha)
        return sorted(d.glob(".*.tmp")) if d.is_dir() else []

    def rewrite(self, model_sha: str, keep: Callable[[str, float], bool] = lambda sha, mtime: True,
                now: float | None = None) -> dict:
        """Merge the model's shards into one holding the entries `keep(text_sha, age as an
        mtime)` accepts, then delete
        the shards merged, invalid shards, and temporaries older than STALE_TMP_S.

        Safe while jobs read and write: the merged shard exists before any shard it replaces
        is deleted, and a shard written meanwhile is not among those deleted. Needs memory
        for the kept vectors (1.5 KiB each at 384 dims). Returns what it removed and freed.
        """
        now = time.time() if now is None else now
        before = self.shards(model_sha)
        vectors, mtimes = self.entries(model_sha)
        kept = {k: v for k, v in vectors.items() if keep(k, mtimes[k])}
        merged = self.put_many(model_sha, kept)
        if merged is not None:
            # The merged shard is as old as its newest entry, so compaction resets no age.
            newest = max(mtimes[k] for k in kept)
            os.utime(merged, (newest, newest))
        replaced = [s.path for s in before if s.path != merged]
        freed = sum(_unlink(path) for path in replaced)
        for tmp in self.temporaries(model_sha):
            try:
                if now - tmp.stat().st_mtime > STALE_TMP_S:
                    freed += _unlink(tmp)
            except FileNotFoundError:
                continue
        # An emptied model directory stays: a job may be about to write into it.
        if merged is not None and len(replaced) == len(before):  # a new file: its bytes are not freed
            freed -= merged.stat().st_size
        return {"model": model_sha, "shards_before": len(before), "entries_before": len(vectors),
                "entries_kept": len(kept), "freed_bytes": freed}


def _unlink(path: Path) -> int:
    try:
        size = path.stat().st_size
        path.unlink()
    except FileNotFoundError:
        return 0  # another compaction removed it first
    return size


def embed_with_cache(texts: list[str], embedder_factory: Callable[[], Embedder], model_sha: str,
                     cache: EmbeddingCache, batch: int = 2048) -> tuple[np.ndarray, dict]:
    """Vectors for texts in input order, embedding only the unique texts the cache lacks.

    The embedder is built only if something is missing. Each chunk of `batch` new texts is
    stored as a shard of its own, so a job killed half-way keeps every complete chunk for
    its rerun.
    """
    shas = [text_sha(t) for t in texts]
    unique = dict(zip(shas, texts, strict=True))  # sha -> text, first occurrence order
    vectors = cache.get_many(model_sha, list(unique))
    cached = len(vectors)
    missing = [sha for sha in unique if sha not in vectors]
    t0 = time.perf_counter()
    embedder = embedder_factory() if missing else None
    loaded, encoding = time.perf_counter() - t0, 0.0  # the model's load, and the embedding alone (throughput)
    with Progress("embedding", len(missing), "texts") as progress:
        for start in range(0, len(missing), batch):
            chunk = missing[start:start + batch]
            t0 = time.perf_counter()
            encoded = embedder.encode([unique[s] for s in chunk], on_batch=progress.advance)
            encoding += time.perf_counter() - t0
            if len(encoded) != len(chunk):
                raise CrmatrixError(f"embedder returned {len(encoded)} vectors for {len(chunk)} texts")
            new = dict(zip(chunk, encoded, strict=True))
            cache.put_many(model_sha, new)
            vectors.update(new)
    stats = {"texts": len(texts), "unique": len(unique), "cached": cached, "embedded": len(missing),
             "load_seconds": round(loaded, 3), "embed_seconds": round(encoding, 3)}
    return _stack(shas, vectors, embedder), stats


def _stack(shas: list[str], vectors: dict[str, np.ndarray], embedder: Embedder | None) -> np.ndarray:
    if shas:
        return np.stack([vectors[s] for s in shas]).astype(np.float32, copy=False)
    # No texts: the width is known only from an embedder, and building one for nothing is waste.
    return np.zeros((0, embedder.dim if embedder else 0), dtype=np.float32)
