"""Phase 2e: the sparse term-coverage bonus, run on the *original* query after the hybrid merge.

A candidate earns a bonus when enough of the query's discriminative words appear as whole
words (`_` counts as a boundary) in its name, qualified name, signature and file path.
"""

from __future__ import annotations

import numpy as np

from crmatrix.identifiers import alnum_words
from crmatrix.symbols import Symbol

# Short on purpose: only words that regularly dilute coverage in code-search queries.
STOPWORDS = frozenset(
    "the for with from that this into onto over not and any all are was were has have had how what when "
    "where which who why but its can use using used gets set sets new let".split()
)


def query_terms(query: str) -> tuple[str, ...]:
    """Lowercase words of >= 3 chars, minus stopwords, deduplicated in order."""
    seen: dict[str, None] = {}
    for t in alnum_words(query):
        if len(t) >= 3 and t not in STOPWORDS:
            seen.setdefault(t, None)
    return tuple(seen)


def bonus(coverage: np.ndarray, n_terms: int, threshold: float, max_bonus: float) -> np.ndarray:
    """0 below the threshold, then rising linearly to `max_bonus` at full coverage."""
    if n_terms < 2:
        return np.zeros_like(coverage, dtype=float)
    ratio = coverage / n_terms
    return np.where(ratio < threshold, 0.0, (ratio - threshold) / max(1.0 - threshold, 0.01) * max_bonus)


def symbol_words(s: Symbol) -> set[str]:
    """The whole words 2e looks for in a symbol: those of its name, qualified name, signature and path."""
    return set(alnum_words(" ".join((s.name, s.qualname, s.signature, s.path))))


class SparseIndex:
    """Term coverage for every symbol at once.

    A term (alphanumeric) occurs as a whole word exactly when it is one of the maximal
    alphanumeric runs of the text, so an inverted index of those runs answers each term
    with one lookup.
    """

    def __init__(self, symbols: list[Symbol]):
        self.n = len(symbols)
        self._words: dict[str, list[int]] = {}
        for i, s in enumerate(symbols):
            for w in symbol_words(s):
                self._words.setdefault(w, []).append(i)

    def coverage(self, terms: tuple[str, ...]) -> np.ndarray:
        """How many of `terms` each symbol holds."""
        coverage = np.zeros(self.n, dtype=np.int64)
        for t in terms:
            coverage[self._words.get(t, [])] += 1
        return coverage

    def bonus(self, query: str, threshold: float, max_bonus: float) -> np.ndarray:
        terms = query_terms(query)
        return bonus(self.coverage(terms), len(terms), threshold, max_bonus)

