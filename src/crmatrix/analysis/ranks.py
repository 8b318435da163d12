"""Rank resolution: which neighbours of an ordering can be told apart.

An ordering by a pooled Δ against one reference (the leaderboard's systems, a system's arms)
invites reading every step as a difference, though neighbours' intervals often overlap. For
each adjacent pair (upper, lower): the paired Δ upper − lower on each dataset both ran, on
the queries both answered (`versus.paired`), pooled by random effects (`versus.pool`); the
pool's two-sided p from its normal z; Holm across the ordering's pairs; the pair is
"separated" when the corrected p is below α, else "tied". A pair with no query both
answered, or none whose differences vary over queries (identical answers), has no p: it is
tied, nothing tells it apart.

Ranks: the first of the order is 1; each next one takes its upper neighbour's rank when the
pair is tied, else its own position (1 + how many come before it), so ties between
neighbours share a rank ("1, 2, 2, 4"). A chain of ties shares one rank though its two ends
may differ: only neighbours are tested.
"""

from __future__ import annotations

from crmatrix.analysis import meta, stats
from crmatrix.analysis.versus import Scores, pool, studies
from crmatrix.results.leaderboard import Separation

SEPARATED, TIED = "separated", "tied"


def _pair(upper: str, lower: str, up: dict[str, Scores], low: dict[str, Scores]) -> dict:
    """The pooled paired Δ upper − lower and its p (None: nothing to test)."""
    paired = studies(low, up)
    pooled, effect = pool(paired)
    return {"upper": upper, "lower": lower, "datasets": len(paired), "queries": sum(s.n for s in paired),
            "delta": effect, "ci": None if pooled is None else (pooled.ci_low, pooled.ci_high),
            "p": None if pooled is None else meta.p_value(pooled.estimate, pooled.se)}


def resolve(order: list[str], scores: dict[str, dict[str, Scores]]) -> tuple[tuple[Separation, ...], dict[str, int]]:
    """The separation of each adjacent pair of `order` (`scores`: name -> dataset -> its scores),
    and each name's rank."""
    pairs = [_pair(a, b, scores[a], scores[b]) for a, b in zip(order, order[1:], strict=False)]
    tested = [i for i, p in enumerate(pairs) if p["p"] is not None]
    adjusted = dict(zip(tested, stats.holm([pairs[i]["p"] for i in tested]), strict=True))
    out = []
    for i, p in enumerate(pairs):
        p_holm = adjusted.get(i)
        out.append(Separation(**p, p_holm=p_holm, mark=SEPARATED if p_holm is not None and p_holm < stats.ALPHA
                              else TIED))
    ranks = {order[0]: 1} if order else {}
    for i, s in enumerate(out, 1):
        ranks[s.lower] = ranks[s.upper] if s.mark == TIED else i + 1
    return tuple(out), ranks
