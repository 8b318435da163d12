"""Rank resolution: which neighbours of an ordering can be told apart.

An ordering by a pooled Δ against one reference (the leaderboard's systems, a system's arms)
invites reading every step as a difference, though neighbours' intervals often overlap. For
each adjacent pair (upper, lower): the paired Δ upper − lower on each dataset both ran, on
the queries both answered (`versus.paired`), pooled by random effects (`versus.pool`); the
pool's two-sided p from its normal z; Holm across the ordering's tested pairs; the pair is
"separated" when the corrected p is below α, else "tied". A pair the test cannot judge
(`versus.testable`: fewer queries both answered than `stats.MIN_QUERIES`, or Δs on no
dataset whose differences vary) has no p and is "not testable", never tied: the lack of a
test is not the lack of a difference. A pair whose answers are identical on enough queries
has no p either, and is tied: nothing tells it apart.

Ranks: the first of the order is 1; each next one takes its upper neighbour's rank unless
the pair is separated, else its own position (1 + how many come before it), so neighbours
not told apart share a rank ("1, 2, 2, 4"). A chain of them shares one rank though its two
ends may differ: only neighbours are tested.
"""

from __future__ import annotations

from crmatrix.analysis import meta, stats
from crmatrix.analysis.versus import Scores, pool, studies, testable
from crmatrix.results.leaderboard import Separation

SEPARATED, TIED, NOT_TESTABLE = "separated", "tied", "not testable"


def _pair(upper: str, lower: str, up: dict[str, Scores], low: dict[str, Scores]) -> tuple[dict, bool]:
    """The pooled paired Δ upper − lower and its p (None: nothing to test), and whether the test
    can judge it."""
    paired = studies(low, up)
    pooled, effect = pool(paired)
    judged = testable(paired, pooled)
    return {"upper": upper, "lower": lower, "datasets": len(paired), "queries": sum(s.n for s in paired),
            "delta": effect, "ci": None if pooled is None else (pooled.ci_low, pooled.ci_high),
            "p": None if pooled is None or not judged else meta.p_value(pooled.estimate, pooled.se)}, judged


def resolve(order: list[str], scores: dict[str, dict[str, Scores]]) -> tuple[tuple[Separation, ...], dict[str, int]]:
    """The separation of each adjacent pair of `order` (`scores`: name -> dataset -> its scores),
    and each name's rank."""
    pairs = [_pair(a, b, scores[a], scores[b]) for a, b in zip(order, order[1:], strict=False)]
    tested = [i for i, (p, _) in enumerate(pairs) if p["p"] is not None]
    adjusted = dict(zip(tested, stats.holm([pairs[i][0]["p"] for i in tested]), strict=True))
    out = []
    for i, (p, judged) in enumerate(pairs):
        p_holm = adjusted.get(i)
        mark = NOT_TESTABLE if not judged else SEPARATED if p_holm is not None and p_holm < stats.ALPHA else TIED
        out.append(Separation(**p, p_holm=p_holm, mark=mark))
    ranks = {order[0]: 1} if order else {}
    for i, s in enumerate(out, 1):
        ranks[s.lower] = i + 1 if s.mark == SEPARATED else ranks[s.upper]
    return tuple(out), ranks
