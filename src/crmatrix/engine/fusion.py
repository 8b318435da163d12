"""How `hybrid` combines the lexical ranker with the semantic candidates: the fusion an arm
picks with CRMATRIX_FUSION.

Every fusion returns one score per symbol (NaN: not a candidate) on the lexical ranker's
0..100 scale, so the 2e bonus added afterwards weighs the same whatever the fusion:

- `codelens`: CodeLens's merge (`hybrid.merge`): lexical first, a few semantic hits folded in.
- `rrf`: reciprocal rank fusion, the sum of 1/(k + rank) over the rankers that returned the
  symbol (a ranker that did not contributes nothing), divided by its maximum 2/(k + 1) (first
  in both). Ranks are 1-based; tied scores share the best rank of their tie, since a ranker
  that cannot tell two symbols apart prefers neither.
- `wsi`: weighted score interpolation, w · semantic + (1 − w) · lexical after min-max
  normalizing each ranker's candidate scores to 0..1 (all equal: 1); a ranker that did not
  return a symbol contributes 0. Unlike rrf it keeps how far apart the scores are.
- `dense-only`: the semantic candidates alone, on CodeLens's scale for semantic hits (the
  best cosine is 100), so with 2e off hybrid ranks exactly as `semantic` does to that depth.

Ties in the fused scores are broken by the engine's (path, start_line, name) order.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from crmatrix.engine import hybrid
from crmatrix.engine.knobs import Knobs

Part = Callable[[np.ndarray], np.ndarray]  # one ranker's candidate scores -> its share of the fused score

SCALE = 100.0


def fuse(kn: Knobs, query: str, lexical: np.ndarray | None, semantic: list[tuple[int, float]], n: int
         ) -> np.ndarray:
    """`lexical` holds one score per symbol (NaN: not a candidate; dense-only takes None);
    `semantic` is (symbol index, cosine), best first, `kn.semantic_depth` of them."""
    if kn.fusion == "codelens":
        return hybrid.merge(query, lexical, semantic, max_semantic=len(semantic))
    if kn.fusion == "rrf":
        return rrf(lexical, semantic, kn.rrf_k)
    if kn.fusion == "wsi":
        return wsi(lexical, semantic, kn.wsi_weight)
    if kn.fusion == "dense-only":
        return dense_only(semantic, n)
    raise ValueError(f"unknown fusion {kn.fusion!r}")  # the CRMATRIX_FUSION knob admits only these


def tie_ranks(scores: np.ndarray) -> np.ndarray:
    """1-based ranks, best first; equal scores share the best rank of their tie (1, 2, 2, 4)."""
    return np.searchsorted(np.sort(-scores), -scores, side="left") + 1


def _semantic_arrays(semantic: list[tuple[int, float]]) -> tuple[np.ndarray, np.ndarray]:
    idx = np.fromiter((i for i, _ in semantic), dtype=np.int64, count=len(semantic))
    cos = np.fromiter((c for _, c in semantic), dtype=np.float64, count=len(semantic))
    return idx, cos


def _combine(lexical: np.ndarray, semantic: list[tuple[int, float]], lexical_part: Part, semantic_part: Part
             ) -> np.ndarray:
    """The sum of each ranker's part over the symbols it returned; NaN where neither did."""
    fused = np.zeros(len(lexical))
    candidate = ~np.isnan(lexical)
    lex_idx = np.flatnonzero(candidate)
    fused[lex_idx] += lexical_part(lexical[lex_idx])
    sem_idx, cos = _semantic_arrays(semantic)
    fused[sem_idx] += semantic_part(cos)
    candidate[sem_idx] = True
    return np.where(candidate, fused, np.nan)


def rrf(lexical: np.ndarray, semantic: list[tuple[int, float]], k: int) -> np.ndarray:
    def part(scores: np.ndarray) -> np.ndarray:
        return 1.0 / (k + tie_ranks(scores))

    return _combine(lexical, semantic, part, part) * (SCALE * (k + 1) / 2)


def _min_max(values: np.ndarray) -> np.ndarray:
    if not values.size:
        return values
    low, high = values.min(), values.max()
    return np.ones_like(values) if high == low else (values - low) / (high - low)


def wsi(lexical: np.ndarray, semantic: list[tuple[int, float]], weight: float) -> np.ndarray:
    return _combine(lexical, semantic, lambda s: (1.0 - weight) * _min_max(s),
                    lambda s: weight * _min_max(s)) * SCALE


def dense_only(semantic: list[tuple[int, float]], n: int) -> np.ndarray:
    fused = np.full(n, np.nan)
    sem_idx, cos = _semantic_arrays(semantic)
    fused[sem_idx] = cos / max([*cos, hybrid.MIN_COSINE]) * SCALE
    return fused
