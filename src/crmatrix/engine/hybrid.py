"""CodeLens's hybrid merge: lexical candidates, then a few semantic hits folded in.

Semantic scores are put on the lexical scale (the best cosine maps to 100) and decay by
rank; a semantic hit already among the lexical candidates can only raise its score, and a
new one is inserted only above a confidence floor. How many semantic hits may enter and
the floor depend on the query's length: short phrases take one strong hit, long
natural-language queries up to six.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MIN_COSINE = 0.05
MAX_SEMANTIC = 6  # semantic hits considered for the merge (the policy caps it further)
RANK_DECAY = 8


@dataclass(frozen=True)
class Policy:
    limit: int
    floor: float
    short_phrase: bool


def policy(query: str, max_semantic: int) -> Policy:
    words = len(query.split())
    if words >= 4:
        return Policy(min(max_semantic, 6), 0.10, False)
    if words >= 2:
        return Policy(min(max_semantic, 2), 0.18, True)
    return Policy(min(max_semantic, 3), 0.12, False)


def merge(query: str, lexical: np.ndarray, semantic: list[tuple[int, float]], max_semantic: int = MAX_SEMANTIC
          ) -> np.ndarray:
    """`lexical` holds one score per symbol (NaN: not a candidate); `semantic` is (symbol index,
    cosine), best first. Returns the merged scores in the same shape."""
    merged = lexical.copy()
    p = policy(query, max_semantic)
    best = max([c for _, c in semantic] + [MIN_COSINE])
    for rank, (idx, cosine) in enumerate(semantic[: p.limit]):
        if cosine < MIN_COSINE:
            continue
        normalized = int(min(max(cosine / best * 100.0, 1.0), 100.0))
        sem_score = min(max(normalized - RANK_DECAY * rank, 1), 100)
        if not np.isnan(merged[idx]):
            merged[idx] = max(merged[idx], sem_score)
        elif cosine >= p.floor and not (p.short_phrase and rank > 0):
            merged[idx] = sem_score
    return merged
