"""A column of strings on disk, from which any selection of rows is read in one numpy pass.

A versioned index holds a string per distinct content (a lowercased name, a signature) for
every commit of a repository; one commit's engine needs the rows of its own occurrences
only. Kept as Python lists, the whole column would sit in every job's memory; read one row at
a time, a commit of 38k symbols costs 38k reads. Stored as UTF-8 bytes with offsets and
memory-mapped, a selection is one gather of bytes, one decode, and one slice per row.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

# Lone surrogates survive (a symbol's text can hold them): encoded and decoded alike.
_ERRORS = "surrogatepass"
CHUNK = 4096  # rows gathered at a time


def save(strings: list[str], directory: Path, name: str) -> None:
    encoded = [s.encode("utf-8", _ERRORS) for s in strings]
    offsets = np.concatenate(([0], np.cumsum([len(b) for b in encoded], dtype=np.int64)))
    np.save(Path(directory) / f"{name}.bytes.npy", np.frombuffer(b"".join(encoded), dtype=np.uint8))
    np.save(Path(directory) / f"{name}.offsets.npy", offsets.astype(np.int64))


class Column:
    """A column `save` wrote, memory-mapped."""

    def __init__(self, directory: Path, name: str):
        # plain arrays over the mapping: a memmap's own indexing costs more than the gather
        self._bytes = np.asarray(np.load(Path(directory) / f"{name}.bytes.npy", mmap_mode="r"))
        self._offsets = np.asarray(np.load(Path(directory) / f"{name}.offsets.npy", mmap_mode="r"))

    def __len__(self) -> int:
        return len(self._offsets) - 1

    def strings(self) -> list[str]:
        """Every row, in order."""
        data, at = self._bytes.tobytes(), self._offsets.tolist()
        return [data[at[i]:at[i + 1]].decode("utf-8", _ERRORS) for i in range(len(self))]

    def joined(self, rows: np.ndarray, sep: str = "\x00") -> tuple[str, np.ndarray]:
        """The strings of `rows` (any order, repeats allowed) joined with the one-character
        ASCII `sep`, and where each starts in that text (in characters)."""
        rows = np.asarray(rows, dtype=np.int64)
        starts = self._offsets[rows]
        lengths = self._offsets[rows + 1] - starts
        at = np.cumsum(lengths + 1) - (lengths + 1)  # where each row's bytes start in the joined bytes
        buf = np.full(int(at[-1] + lengths[-1]) if len(rows) else 0, ord(sep), dtype=np.uint8)
        for lo in range(0, len(rows), CHUNK):  # in chunks: the byte indices are 8 bytes a byte
            n = lengths[lo:lo + CHUNK]
            within = np.arange(int(n.sum())) - np.repeat(np.cumsum(n) - n, n)  # each byte's place in its row
            buf[np.repeat(at[lo:lo + CHUNK], n) + within] = self._bytes[np.repeat(starts[lo:lo + CHUNK], n) + within]
        # a row starts at as many characters as bytes before it, less the continuation bytes (10xxxxxx)
        continuation = np.flatnonzero((buf & 0xC0) == 0x80)
        return buf.tobytes().decode("utf-8", _ERRORS), at - np.searchsorted(continuation, at)
