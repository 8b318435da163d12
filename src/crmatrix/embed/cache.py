"""A content-addressed embedding cache shared by every index and every parallel job.

Rows are keyed by (model sha256, text sha256): an index rebuilt with other knob settings
embeds only the texts that actually changed. SQLite in WAL mode lets concurrent Snakemake
jobs read while one writes; the busy timeout makes writers queue instead of failing.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable
from pathlib import Path

import numpy as np

from crmatrix import CrmatrixError
from crmatrix.embed.backends import Embedder
from crmatrix.progress import Progress

_BUSY_TIMEOUT_S = 60.0
# SQLite caps bound parameters per statement (32766 by default); stay well below it.
_MAX_PARAMS = 900
_SCHEMA = """
CREATE TABLE IF NOT EXISTS embeddings (
    model_sha TEXT NOT NULL,
    text_sha  TEXT NOT NULL,
    dim       INTEGER NOT NULL,
    vector    BLOB NOT NULL,
    PRIMARY KEY (model_sha, text_sha)
) WITHOUT ROWID
"""


def text_sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _to_blob(vector: np.ndarray) -> tuple[int, bytes]:
    vector = np.ascontiguousarray(vector, dtype="<f4").reshape(-1)
    return vector.size, vector.tobytes()


class EmbeddingCache:
    """Vectors by (model_sha, text_sha) in one SQLite file; all writes are transactional."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # isolation_level=None: transactions are opened explicitly in put_many, nowhere else.
        self._db = sqlite3.connect(self.path, timeout=_BUSY_TIMEOUT_S, isolation_level=None)
        self._db.execute(f"PRAGMA busy_timeout = {int(_BUSY_TIMEOUT_S * 1000)}")
        self._db.execute("PRAGMA journal_mode = WAL")
        self._db.execute(_SCHEMA)

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> "EmbeddingCache":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def get_many(self, model_sha: str, text_shas: list[str]) -> dict[str, np.ndarray]:
        """The stored vectors among text_shas; a row whose blob does not hold `dim` floats is skipped."""
        found: dict[str, np.ndarray] = {}
        keys = list(dict.fromkeys(text_shas))
        for start in range(0, len(keys), _MAX_PARAMS):
            chunk = keys[start:start + _MAX_PARAMS]
            rows = self._db.execute(
                f"SELECT text_sha, dim, vector FROM embeddings WHERE model_sha = ? "
                f"AND text_sha IN ({','.join('?' * len(chunk))})", [model_sha, *chunk])
            for sha, dim, blob in rows:
                # A truncated or foreign blob counts as missing: it is re-embedded and overwritten.
                if isinstance(blob, bytes) and dim > 0 and len(blob) == 4 * dim:
                    found[sha] = np.frombuffer(blob, dtype="<f4").astype(np.float32)
        return found

    def put_many(self, model_sha: str, items: dict[str, np.ndarray]) -> None:
        """Store all items in one transaction: on any error none of them is stored."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            for sha, vector in items.items():
                dim, blob = _to_blob(vector)
                self._db.execute("INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?, ?)",
                                 (model_sha, sha, dim, blob))
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")


def embed_with_cache(texts: list[str], embedder_factory: Callable[[], Embedder], model_sha: str,
                     cache: EmbeddingCache, batch: int = 512) -> tuple[np.ndarray, dict]:
    """Vectors for texts in input order, embedding only the unique texts the cache lacks.

    The embedder is built only if something is missing. Each chunk of `batch` new texts is
    committed on its own, so a job killed half-way keeps every complete chunk for its rerun.
    """
    shas = [text_sha(t) for t in texts]
    unique = dict(zip(shas, texts))  # sha -> text, first occurrence order
    vectors = cache.get_many(model_sha, list(unique))
    cached = len(vectors)
    missing = [sha for sha in unique if sha not in vectors]
    embedder = embedder_factory() if missing else None
    with Progress("embedding", len(missing), "texts") as progress:
        for start in range(0, len(missing), batch):
            chunk = missing[start:start + batch]
            encoded = embedder.encode([unique[s] for s in chunk], on_batch=progress.advance)
            if len(encoded) != len(chunk):
                raise CrmatrixError(f"embedder returned {len(encoded)} vectors for {len(chunk)} texts")
            new = dict(zip(chunk, encoded))
            cache.put_many(model_sha, new)
            vectors.update(new)
    stats = {"texts": len(texts), "unique": len(unique), "cached": cached, "embedded": len(missing)}
    return _stack(shas, vectors, embedder), stats


def _stack(shas: list[str], vectors: dict[str, np.ndarray], embedder: Embedder | None) -> np.ndarray:
    if shas:
        return np.stack([vectors[s] for s in shas]).astype(np.float32, copy=False)
    # No texts: the width is known only from an embedder, and building one for nothing is waste.
    return np.zeros((0, embedder.dim if embedder else 0), dtype=np.float32)
