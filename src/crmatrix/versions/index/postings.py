"""Term-major postings of many items on disk: for each word, the items holding it and a count.

What a versioned index stores per distinct content for the rankers that look words up (BM25's
term counts, 2e's words): written once, memory-mapped by each commit's view, which reads the
postings of a query's words only. Words are numbered in sorted order and each word's items
ascend, so the same items give the same bytes.

On disk, in a directory of its own: `vocab.json` (the words, sorted), `indptr.npy` (int64,
word w's postings are `indptr[w]:indptr[w + 1]`), `items.npy` and `counts.npy` (int32).
"""

from __future__ import annotations

from array import array
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

import numpy as np

from crmatrix import CrmatrixError, atomic

VOCAB = "vocab.json"


class Builder:
    """Items added one by one (`add`), then written whole (`save`)."""

    def __init__(self):
        self.items = 0
        self._vocab: dict[str, int] = {}
        self._item, self._word, self._count = array("i"), array("i"), array("i")

    def add(self, counts: Mapping[str, int]) -> None:
        """The next item: each word it holds and how often."""
        self._item.extend([self.items] * len(counts))
        self._word.extend(self._vocab.setdefault(w, len(self._vocab)) for w in counts)
        self._count.extend(counts.values())
        self.items += 1

    def part(self) -> Part:
        """What was added, as one part of `save`'s (items numbered in the order they came)."""
        return Part(list(self._vocab), np.frombuffer(self._word, dtype=np.int32).astype(np.int64),
                    np.frombuffer(self._item, dtype=np.int32).astype(np.int64),
                    np.frombuffer(self._count, dtype=np.int32))

    def save(self, directory: Path) -> None:
        save([self.part()], directory)


class Part(NamedTuple):
    """Postings of some items, flat: each posting's word (an index into `words`), item and count."""

    words: list[str]
    word: np.ndarray
    item: np.ndarray
    count: np.ndarray

    def renumbered(self, items: np.ndarray) -> Part:
        """The same postings with item i renumbered `items[i]`; those renumbered -1 are dropped."""
        item = np.asarray(items, dtype=np.int64)[self.item]
        keep = item >= 0
        return Part(self.words, self.word[keep], item[keep], self.count[keep])


def save(parts: list[Part], directory: Path) -> None:
    """Write the postings of every part (their items numbered alike) into `directory`, made
    here: the words that keep a posting, sorted, each word's items ascending."""
    directory = Path(directory)
    directory.mkdir(parents=True)
    vocab = sorted(set().union(*(p.words for p in parts)))
    place = {w: i for i, w in enumerate(vocab)}
    word = np.concatenate([np.fromiter((place[w] for w in p.words), dtype=np.int64, count=len(p.words))[p.word]
                           for p in parts] or [np.zeros(0, np.int64)])
    item = np.concatenate([p.item for p in parts] or [np.zeros(0, np.int64)])
    count = np.concatenate([p.count for p in parts] or [np.zeros(0, np.int32)])
    used = np.unique(word)  # a part's word whose items were all dropped is no word of these
    if len(used) < len(vocab):
        vocab, word = [vocab[i] for i in used.tolist()], np.searchsorted(used, word)
    order = np.lexsort((item, word))
    indptr = np.concatenate(([0], np.cumsum(np.bincount(word, minlength=len(vocab)))))
    np.save(directory / "indptr.npy", indptr.astype(np.int64))
    np.save(directory / "items.npy", item[order].astype(np.int32))
    np.save(directory / "counts.npy", count[order].astype(np.int32))
    atomic.write_json(directory / VOCAB, vocab)


class Postings:
    """Postings `Builder.save` wrote, memory-mapped."""

    def __init__(self, directory: Path):
        directory = Path(directory)
        try:
            words = atomic.read_json(directory / VOCAB)
            self._indptr, self._items, self._counts = (np.load(directory / f"{name}.npy", mmap_mode="r")
                                                       for name in ("indptr", "items", "counts"))
        except (OSError, ValueError) as e:
            raise CrmatrixError(f"{directory}: not readable postings ({e}); delete the index and run again") from None
        self._vocab = {w: i for i, w in enumerate(words)}

    def get(self, word: str) -> tuple[np.ndarray, np.ndarray] | None:
        """(the items holding `word`, ascending, as int64; its count in each), None if none does."""
        w = self._vocab.get(word)
        if w is None:
            return None
        lo, hi = int(self._indptr[w]), int(self._indptr[w + 1])
        return np.asarray(self._items[lo:hi], dtype=np.int64), np.asarray(self._counts[lo:hi])

    def part(self) -> Part:
        """All of them, as a part of `save`'s."""
        indptr = np.asarray(self._indptr)
        return Part(list(self._vocab), np.repeat(np.arange(len(self._vocab)), np.diff(indptr)),
                    np.asarray(self._items, dtype=np.int64), np.asarray(self._counts))
