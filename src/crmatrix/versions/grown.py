"""Where the rows of a table grown from a base come from.

A repository's store and index are built again when a commit is added, and most of their
rows — one per distinct content or file — are a previous build's (`crmatrix.versions.bases`). The new
table lists its rows in its own canonical order, each either a row of the base or a new one,
so every per-row part (an array, a list, postings) is the base's and the new rows' parts
gathered by one `pick`. A build with no base is the same with no base rows: one code path,
and a grown table is the bytes a cold build of the same rows writes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Grown:
    """`pick[i]`: the source of row i, an index into the base's `base` rows followed by the
    `new` new ones. A source is picked once at most; base rows not picked are dropped."""

    base: int
    new: int
    pick: np.ndarray

    @classmethod
    def fresh(cls, n: int) -> Grown:
        """n new rows, in their order (no base)."""
        return cls(0, n, np.arange(n, dtype=np.int64))

    def __len__(self) -> int:
        return len(self.pick)

    def take(self, base: np.ndarray, new: np.ndarray) -> np.ndarray:
        """The rows of a per-row array: the base's and the new rows' gathered."""
        return np.concatenate([np.asarray(base)[:self.base], np.asarray(new)[:self.new]])[self.pick]

    def take_list(self, base: list, new: list) -> list:
        both = [*base, *new]
        return [both[i] for i in self.pick.tolist()]

    def renumbering(self) -> tuple[np.ndarray, np.ndarray]:
        """(each base row's row in the table, each new row's): -1 for a row dropped."""
        at = np.full(self.base + self.new, -1, dtype=np.int64)
        at[self.pick] = np.arange(len(self.pick))
        return at[:self.base], at[self.base:]

    def keeps_base(self) -> bool:
        """Whether every base row is a row of the table (the base is superseded by it)."""
        return bool((self.renumbering()[0] >= 0).all())
