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


def save(strings: list[str], directory: Path, name: str) -> None:
    encoded = [s.encode("utf-8", _ERRORS) for s in strings]
    offsets = np.concatenate(([0], np.cumsum([len(b) for b in encoded], dtype=np.int64)))
    np.save(Path(directory) / f"{name}.bytes.npy", np.frombuffer(b"".join(encoded), dtype=np.uint8))
    np.save(Path(directory) / f"{name}.offsets.npy", offsets.astype(np.int64))


class Column:
    """A column `save` wrote, memory-mapped."""

    def __init__(self, directory: Path, name: str):
        self._bytes = np.load(Path(directory) / f"{name}.bytes.npy", mmap_mode="r")
        self._offsets = np.load(Path(directory) / f"{name}.offsets.npy", mmap_mode="r")

    def __len__(self) -> int:
        return len(self._offsets) - 1

    def take(self, rows: np.ndarray) -> list[str]:
        """The strings of `rows` (any order, repeats allowed), as a list."""
        rows = np.asarray(rows, dtype=np.int64)
        starts = np.asarray(self._offsets[rows])
        lengths = np.asarray(self._offsets[rows + 1]) - starts
        at = np.cumsum(lengths) - lengths  # where each row's bytes land in the gathered buffer
        total = int(lengths.sum())
        buf = np.asarray(self._bytes[np.repeat(starts - at, lengths) + np.arange(total)])
        text = buf.tobytes().decode("utf-8", _ERRORS)
        # a character starts at every byte that is not a continuation byte (10xxxxxx)
        chars = np.concatenate(([0], np.cumsum((buf & 0xC0) != 0x80)))
        begin, end = chars[at].tolist(), chars[at + lengths].tolist()
        return [text[b:e] for b, e in zip(begin, end, strict=True)]
