"""What the matrix can tell: the `power` block. Per row, its queries, its family of hypotheses
and the effect it can detect; per pooled group of a system's datasets (a language, a public
benchmark with two datasets or more, all plain datasets) each arm's pooled Δ with its
interval, the interval's half-width, the effect the pool can detect, a verdict called only
where the interval leaves the flat band wholly on one side or holds it, and the queries it
moved; the group's MDE counts the arms that move queries (`group_mde`)."""

from __future__ import annotations

import statistics

from crmatrix.analysis import stats
from crmatrix.analysis.matrix.pooling import compared, pool, study
from crmatrix.results.cell import METRIC, FormatFacts
from crmatrix.results.pool import Judged, Pooled, Power, PowerGroup, PowerRow
from crmatrix.results.row import Row

# An arm counts in its group's MDE when it moves at least this share of the group's queries.
MOVED_SHARE = 0.1


def verdict(low: float, high: float, flat: float) -> str:
    """A pooled Δ's verdict from its interval [low, high] and the flat band |Δ| < `flat`:
    positive (negative) when the interval lies wholly above (below) the band and zero, flat when
    it lies within the band, undecided when it reaches across an edge of it."""
    if low >= flat and low > 0:
        return "positive"
    if high <= -flat and high < 0:
        return "negative"
    if -flat < low and high < flat:
        return "flat"
    return "undecided"


def judge(pooled: Pooled, base: dict[str, float], moved: int) -> Judged:
    """One arm of a group: its random-effects pool (`meta.random_effects`, weights by dataset)
    with the interval's half-width, the Δ it detects with the target power at alpha (two-sided),
    the verdict against a flat band of 1 % of `base` (each dataset's baseline metric) averaged
    with the pool's weights, the baseline the pooled Δ is relative to, and the queries it `moved`."""
    flat = stats.FLAT * sum(w * base[d] for d, w in pooled.weights.items())
    low, high = pooled.ci_low, pooled.ci_high
    return Judged(delta=pooled.estimate, ci=(low, high), half_width=(high - low) / 2,
                  mde=stats.z_sum(stats.ALPHA, stats.POWER) * pooled.se, verdict=verdict(low, high, flat),
                  moved=moved)


def group_mde(judged: dict[str, Judged], queries: int) -> tuple[float | None, tuple[str, ...]]:
    """A group's MDE: the median of the MDEs of its arms that moved at least MOVED_SHARE of its
    `queries`, and those arms (None and none: no arm did). An arm that moves a handful of
    queries has a tiny standard error, and a median over every arm would flatter the group."""
    moving = tuple(a for a, j in judged.items() if j.moved >= MOVED_SHARE * queries)
    return (statistics.median(judged[a].mde for a in moving) if moving else None), moving


def _groups(rows: list[Row], formats: dict[str, FormatFacts | None]) -> list[tuple[str, str, str, list[Row]]]:
    """(system, kind, group, its rows) of every group power reports on, in order: per system its
    plain datasets (structural splits re-ask a dataset's queries) by language, by public benchmark
    format that two of them or more share, and all together."""
    out = []
    for system in sorted({r.system for r in rows}):
        plain = [r for r in rows if r.system == system and not r.split]
        for lang in sorted({r.language or "?" for r in plain}):
            out.append((system, "language", lang, [r for r in plain if (r.language or "?") == lang]))
        benchmarks = {r.dataset: formats[r.dataset].name for r in plain
                      if formats[r.dataset] is not None and formats[r.dataset].benchmark}
        for fmt in sorted(set(benchmarks.values())):
            members = [r for r in plain if benchmarks.get(r.dataset) == fmt]
            if len(members) >= 2:
                out.append((system, "benchmark", fmt, members))
        if plain:
            out.append((system, "overall", "all datasets", plain))
    return out


def block(rows: list[Row], arms: list[str], baseline: str, formats: dict[str, FormatFacts | None], method: str
          ) -> Power:
    """The power block of a matrix's rows; `formats`: the facts of each row's dataset's format.
    Each arm of a group is pooled as the matrix pools it (`pooling.pool`); one that moved no
    query on any of the group's datasets has nothing to pool and is left out."""
    groups = []
    for system, kind, group, members in _groups(rows, formats):
        base = {r.dataset: r.cells[baseline].mean for r in members if baseline in r.cells}
        judged = {}
        for arm in (a for a in arms if a != baseline):
            studies = [study(r, arm) for r in members if compared(r, arm)]
            pooled = pool(group, kind, studies).pooled if studies else None
            if pooled is not None:
                moved = sum(r.cells[arm].compared.improved + r.cells[arm].compared.regressed
                            for r in members if compared(r, arm))
                judged[arm] = judge(pooled, base, moved)
        queries = sum(r.n for r in members)
        mde, moving = group_mde(judged, queries)
        groups.append(PowerGroup(group=group, kind=kind, system=system, datasets=len(members), queries=queries,
                                 mde=mde, mde_arms=moving, arms=judged))
    return Power(method=method, metric=METRIC, alpha=stats.ALPHA, target_power=stats.POWER, moved_share=MOVED_SHARE,
                 rows=tuple(PowerRow(dataset=r.dataset, system=r.system, n=r.n, hypotheses=len(r.family),
                                     mde=r.detectable.abs, mde_rel=r.detectable.rel) for r in rows),
                 groups=tuple(groups))
