"""Phase 2e: the sparse term-coverage bonus, run on the *original* query after the hybrid merge.

A candidate earns a bonus when enough of the query's discriminative words appear as whole
words (`_` counts as a boundary) in its name, qualified name, signature and file path.
"""

from __future__ import annotations

import re
from functools import lru_cache

# Short on purpose: only words that regularly dilute coverage in code-search queries.
STOPWORDS = frozenset(
    "the for with from that this into onto over not and any all are was were has have had how what when "
    "where which who why but its can use using used gets set sets new let".split()
)
_NON_ALNUM = re.compile(r"[^0-9a-z]+")


def query_terms(query: str) -> tuple[str, ...]:
    """Lowercase words of >= 3 chars, minus stopwords, deduplicated in order."""
    seen: dict[str, None] = {}
    for t in _NON_ALNUM.split(query.lower()):
        if len(t) >= 3 and t not in STOPWORDS:
            seen.setdefault(t, None)
    return tuple(seen)


@lru_cache(maxsize=4096)
def _whole_word(term: str) -> re.Pattern:
    return re.compile(rf"(?<![0-9a-z]){re.escape(term)}(?![0-9a-z])")


def coverage_bonus(terms: tuple[str, ...], fields: str, threshold: float, max_bonus: float) -> float:
    """`fields` is the lowercased `name qualname signature path`; below the threshold the bonus is 0,
    from there it rises linearly to `max_bonus` at full coverage."""
    if len(terms) < 2:
        return 0.0
    coverage = sum(_whole_word(t).search(fields) is not None for t in terms) / len(terms)
    if coverage < threshold:
        return 0.0
    return (coverage - threshold) / max(1.0 - threshold, 0.01) * max_bonus
