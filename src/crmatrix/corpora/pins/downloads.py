"""HTTP downloads for pins: streamed to a file or memory, hashed on the way, bounded in size,
and retried with backoff on the server's or the connection's transient failures."""

from __future__ import annotations

import hashlib
import http.client
import io
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import BinaryIO

from crmatrix import CrmatrixError
from crmatrix.progress import Progress

HTTP_TIMEOUT_S = 60
# A corpus tarball is a few MiB; this bounds what a wrong URL or a broken server can fill.
MAX_DOWNLOAD_BYTES = 512 << 20
CHUNK_BYTES = 1 << 20
# Seconds slept before each retry of a transient failure (so 1 + len attempts in all).
RETRY_DELAYS_S = (1.0, 3.0, 9.0)


def _transient(e: Exception) -> bool:
    """Worth another attempt: the server's own trouble (5xx, 429) or the connection's
    (refused, reset, timed out, cut short). Never a 404 or another client error, nor a
    local failure such as a full disk."""
    if isinstance(e, urllib.error.HTTPError):
        return e.code >= 500 or e.code == 429
    return isinstance(e, (urllib.error.URLError, ConnectionError, TimeoutError, http.client.HTTPException))


def _too_large(url: str, max_bytes: int) -> CrmatrixError:
    return CrmatrixError(f"download failed: {url}: more than {max_bytes} bytes (the download limit)")


def _stream(url: str, accept: str | None, max_bytes: int, out: BinaryIO, hashes: list) -> None:
    headers = {"User-Agent": "crmatrix", **({"Accept": accept} if accept else {})}
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=HTTP_TIMEOUT_S) as resp:
        if (resp.length or 0) > max_bytes:  # http.client's parsed Content-Length
            raise _too_large(url, max_bytes)
        total = 0
        with Progress(f"downloading {url.rsplit('/', 1)[-1]}", resp.length, "bytes") as progress:
            while chunk := resp.read(CHUNK_BYTES):
                total += len(chunk)
                if total > max_bytes:  # a server that sends no length, or more than it said
                    raise _too_large(url, max_bytes)
                out.write(chunk)
                for h in hashes:
                    h.update(chunk)
                progress.advance(len(chunk))
        if resp.length:  # http.client reads b"" at an early close; the bytes still owed tell
            raise ConnectionError(f"connection closed after {total} bytes, {resp.length} more announced")


def _get(url: str, out: BinaryIO, algorithms: list[str], accept: str | None, max_bytes: int) -> dict[str, bytes]:
    """Stream `url` into `out`, hashing as it passes; retry transient failures with backoff.

    Each attempt starts `out` and the hashes afresh, so a response cut short never leaves
    its bytes in the result.
    """
    attempt = 0
    while True:
        attempt += 1
        out.seek(0)
        out.truncate()
        hashes = {a: hashlib.new(a) for a in algorithms}
        try:
            _stream(url, accept, max_bytes, out, list(hashes.values()))
            return {a: h.digest() for a, h in hashes.items()}
        except (OSError, http.client.HTTPException) as e:
            if attempt > len(RETRY_DELAYS_S) or not _transient(e):
                after = f" (after {attempt} attempts)" if attempt > 1 else ""
                raise CrmatrixError(f"download failed: {url}: {e}{after}") from e
        time.sleep(RETRY_DELAYS_S[attempt - 1])


def http_get(url: str, accept: str | None = None, max_bytes: int = MAX_DOWNLOAD_BYTES) -> bytes:
    """A small response (an index page, package metadata), in memory."""
    buf = io.BytesIO()
    _get(url, buf, [], accept, max_bytes)
    return buf.getvalue()


def download(url: str, path: Path, algorithms: list[str], max_bytes: int = MAX_DOWNLOAD_BYTES) -> dict[str, bytes]:
    """Stream `url` to the file `path` in chunks; returns its digest per hash algorithm.
    On any failure `path` is removed."""
    try:
        with open(path, "wb") as f:
            return _get(url, f, algorithms, None, max_bytes)
    except BaseException:
        Path(path).unlink(missing_ok=True)
        raise
