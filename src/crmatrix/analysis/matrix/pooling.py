"""One arm across datasets: each dataset a study of it, pooled by random effects
(`crmatrix.analysis.meta`) per language, over all plain datasets, and over the structural splits."""

from __future__ import annotations

import math

from crmatrix.analysis import meta
from crmatrix.results.pool import VERDICTS, Pooled, PoolEntry, PoolGroup, Study, Tally
from crmatrix.results.row import PlainRow


def study(row: PlainRow, arm: str) -> Study:
    """One dataset as a study of the arm: its paired Δ, the Δ's standard error sd_diff/√n and
    normal interval (the ones the pool weighs by), and its verdict."""
    c = row.cells[arm]
    se = c.compared.sd_diff / math.sqrt(c.n) if c.n else 0.0
    low, high = meta.normal_interval(c.compared.delta_abs, se)
    verdict = "inert" if c.compared.band == "flat" else "positive" if c.compared.delta_abs > 0 else "negative"
    return Study(dataset=row.dataset, language=row.language or "?", split=row.split, n=c.n,
                 delta=c.compared.delta_abs, se=se, ci_low=low, ci_high=high, verdict=verdict,
                 identical_to=c.identical_to)


def compared(row: PlainRow, arm: str) -> bool:
    """Whether the row holds the arm compared with the baseline."""
    c = row.cells.get(arm)
    return c is not None and c.compared is not None


def pool(group: str, kind: str, studies: list[Study]) -> PoolGroup:
    """Random-effects pool of the studies whose queries varied (a Δ with no per-query spread
    has no sampling variance to weigh by; it is listed, not pooled)."""
    varied = [s for s in studies if s.se > 0]
    pooled = meta.random_effects([s.delta for s in varied], [s.se ** 2 for s in varied]) if varied else None
    return PoolGroup(group=group, kind=kind, datasets=tuple(s.dataset for s in studies),
                     unvaried=tuple(s.dataset for s in studies if s.se == 0),
                     verdict=Tally(**{v: sum(s.verdict == v for s in studies) for v in VERDICTS}),
                     pooled=None if pooled is None else Pooled.of(pooled, (s.dataset for s in varied)))


def pooled(rows: list[PlainRow], arms: list[str], baseline: str) -> list[PoolEntry]:
    """Per (system, arm): each dataset's Δ and the pool per language and over all plain datasets;
    structural splits re-ask a dataset's queries, so they pool apart, never with their source."""
    out = []
    for system in sorted({r.system for r in rows}):
        for arm in (a for a in arms if a != baseline):
            studies = [study(r, arm) for r in rows if r.system == system and compared(r, arm)]
            plain = [s for s in studies if not s.split]
            splits = [s for s in studies if s.split]
            groups = [pool(lang, "language", [s for s in plain if s.language == lang])
                      for lang in sorted({s.language for s in plain})]
            groups += [pool("all datasets", "overall", plain)] if plain else []
            groups += [pool("structural splits", "split", splits)] if splits else []
            if studies:
                out.append(PoolEntry(system=system, arm=arm, studies=tuple(studies), groups=tuple(groups)))
    return out
