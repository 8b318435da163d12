"""One-hop graph expansion of a ranking (CRMATRIX_GRAPH_EXPAND): the symbols next to the
best hits in the corpus's reference graph join the candidates.

The second seed found that a caller, callee or override of what dense retrieval ranks
first is often the answer it never ranks; expansion lets the matrix measure that.
"""

from __future__ import annotations

import numpy as np


def expand(scores: np.ndarray, seeds: np.ndarray, neighbours: list[np.ndarray], decay: float) -> np.ndarray:
    """`scores` (one per symbol, NaN: not a candidate) with each neighbour of a seed scored
    max(its own score, the seed's score × decay), over all the seeds it neighbours."""
    out = scores.copy()
    for seed in seeds:
        near = neighbours[seed]
        offered = scores[seed] * decay
        out[near] = np.fmax(out[near], offered)  # fmax: a NaN (not a candidate) loses to the offer
    return out
