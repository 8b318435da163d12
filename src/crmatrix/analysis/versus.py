"""Systems compared with one another: each system's headline metric per dataset, and each
system against the reference system (config `reference_system`), pooled over datasets.

A comparison of two systems is paired on the queries BOTH answered: a query that failed on
either side (crash, timeout, bad output, budget) is left out of that dataset's Δ, so one
tool's failures never count as the other's win; how many were left out is reported beside
the Δ. Each dataset is then a study (Δ, its standard error sd_diff/√n), pooled by random
effects as the arms are (`crmatrix.analysis.matrix.pooling`); the leaderboard orders the
systems by that pooled Δ (the reference's own is 0). Runs are the baseline arm's: systems
are compared as they ship.

What a comparison reads of a (dataset, system) is its headline method's per-query scores
(`crmatrix.results.cell.QueryScore`): the charts take them from the runs (`compare`), the
phase matrix from the baseline's cells (`compare_scored`), so both say the same numbers.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from crmatrix.analysis import meta, stats
from crmatrix.analysis.cells import headline_method, query_scores
from crmatrix.hits import FILE, SYMBOL
from crmatrix.results.cell import METRIC, QueryScore
from crmatrix.results.pool import VERDICTS, Pooled, Tally
from crmatrix.results.run import NAMED_NOTHING, QueryRow, Run
from crmatrix.results.versus import Compared, PairedStudy, Score, Versus


@dataclass(frozen=True)
class Scores:
    """A (dataset, system)'s headline method, its corpus's language and its queries' scores."""
    method: str
    language: str
    queries: tuple[QueryScore, ...]


def headline_rows(run: Run, preferred: str) -> tuple[str, tuple[QueryRow, ...]]:
    """The run's headline method and its query rows."""
    method = headline_method(run, preferred)
    return method, run.methods[method].queries


def rows_by_system(runs: list[Run], preferred: str) -> dict[str, list[QueryRow]]:
    """Each system's query rows of its headline method, over all its runs in `runs`."""
    by: dict[str, list[QueryRow]] = {}
    for run in runs:
        by.setdefault(run.system, []).extend(headline_rows(run, preferred)[1])
    return by


def score(queries: Sequence[QueryScore]) -> dict:
    """The headline metric's mean over every query (a failed one scores as a miss) with its
    bootstrap interval, the failures by kind, and the answers naming nothing of the corpus by outcome."""
    values = np.fromiter((q.value for q in queries), dtype=float, count=len(queries))
    low, high = stats.bootstrap_ci(values)
    failures: dict[str, int] = {}
    for q in queries:
        if q.failure:
            failures[q.failure] = failures.get(q.failure, 0) + 1
    return {"mean": float(values.mean()) if values.size else 0.0, "ci_low": low, "ci_high": high, "n": len(queries),
            "failed": sum(failures.values()), "failures": dict(sorted(failures.items())),
            **{o: sum(q.outcome == o for q in queries) for o in NAMED_NOTHING}}


def paired(ref: Sequence[QueryScore], own: Sequence[QueryScore]) -> dict | None:
    """`own`'s Δ against `ref` on the queries both answered (None: there are none)."""
    ref_by = {q.task_id: q for q in ref if not q.failure}
    own_by = {q.task_id: q for q in own if not q.failure}
    both = sorted(ref_by.keys() & own_by.keys())
    if not both:
        return None
    cmp = stats.compare_values([ref_by[t].value for t in both], [own_by[t].value for t in both])
    se = cmp["sd_diff"] / math.sqrt(cmp["n"])
    low, high = meta.normal_interval(cmp["delta_abs"], se)
    verdict = "inert" if cmp["band"] == "flat" else "positive" if cmp["delta_abs"] > 0 else "negative"
    return {"n": cmp["n"], "left_out": len({q.task_id for q in own} | {q.task_id for q in ref}) - len(both),
            "reference_mean": cmp["base"], "system_mean": cmp["arm"], "delta": cmp["delta_abs"], "se": se,
            "ci_low": low, "ci_high": high, "bootstrap_ci": (cmp["ci_low"], cmp["ci_high"]),
            "p_randomization": cmp["p_randomization"], "verdict": verdict}


def pool(studies: Sequence[PairedStudy]) -> tuple[Pooled | None, float]:
    """The random-effects pool of the studies whose differences varied (None: none did), and the
    effect it stands for: the pool's estimate, else the plain mean of the Δs (0 without studies)."""
    varied = [s for s in studies if s.se > 0]
    pooled = meta.random_effects([s.delta for s in varied], [s.se ** 2 for s in varied]) if varied else None
    pooled = None if pooled is None else Pooled.of(pooled, (s.dataset for s in varied))
    effect = pooled.estimate if pooled else (sum(s.delta for s in studies) / len(studies) if studies else 0.0)
    return pooled, effect


def testable(studies: Sequence[PairedStudy], pooled: Pooled | None) -> bool:
    """Whether the paired test can judge a comparison over these studies (`pool`'s): at least
    `stats.MIN_QUERIES` queries both answered (on fewer no outcome of the exact paired test is
    significant, and the pool's normal z would claim what they cannot show), and a pool to test,
    unless no dataset's Δ differs from 0 (then nothing tells them apart: tied, not untestable).
    One rule for the leaderboard's pairs, its standings and its chart; a cell's is its n alone."""
    return (sum(s.n for s in studies) >= stats.MIN_QUERIES
            and (pooled is not None or all(s.delta == 0 for s in studies)))


def studies(ref: dict[str, Scores], own: dict[str, Scores]) -> list[PairedStudy]:
    """`own` against `ref` (dataset -> scores) on each dataset both ran, in dataset order."""
    out = []
    for d in sorted(ref.keys() & own.keys()):
        p = paired(ref[d].queries, own[d].queries)
        if p is not None:
            out.append(PairedStudy(dataset=d, language=own[d].language, **p))
    return out


def scored(runs: list[Run], preferred: str, level: str = SYMBOL) -> dict[tuple[str, str], Scores]:
    """(dataset, system) -> its run's headline scores (`preferred`: the config's headline method),
    at the gold's level or (`level` FILE) at file level."""
    out = {}
    for run in runs:
        method, rows = headline_rows(run, preferred)
        out[(run.dataset, run.system)] = Scores(method, run.provenance.corpus.language or "?",
                                                at_level(query_scores(rows), level))
    return out


def at_level(queries: tuple[QueryScore, ...], level: str) -> tuple[QueryScore, ...]:
    """The queries' scores at the gold's level, or at file level (`level` FILE: a query whose gold
    is finer than files scores its `file` value)."""
    if level != FILE:
        return queries
    return tuple(q if q.file is None else replace(q, value=q.file, file=None) for q in queries)


def level(runs: list[Run], preferred: str) -> str:
    """The finest level every system of `runs` answers: FILE when a headline method's hits name
    files (its `granularity`), else SYMBOL (each query scored at its gold's level)."""
    return FILE if any(run.methods[headline_rows(run, preferred)[0]].granularity == FILE for run in runs) else SYMBOL


def compare(runs: list[Run], reference: str, preferred: str) -> Compared:
    """`compare_scored` of the baseline arm's runs of each system on each dataset, at the finest
    level every system answers (`level`); `preferred`: the config's headline method (a system
    without it is scored on its first method)."""
    at = level(runs, preferred)
    return replace(compare_scored(scored(runs, preferred, at), reference), level=at)


def compare_scored(cells: dict[tuple[str, str], Scores], reference: str) -> Compared:
    """Every system's score per dataset, and each other system against `reference` per dataset
    and pooled; `systems` in leaderboard order (pooled Δ, highest first; then by name)."""
    systems = sorted({s for _, s in cells})
    datasets = sorted({d for d, _ in cells})
    by_system = {s: {d: c for (d, t), c in cells.items() if t == s} for s in systems}
    scores = [Score(dataset=d, system=s, method=c.method, language=c.language, **score(c.queries))
              for (d, s), c in sorted(cells.items())]
    versus = []
    for system in systems:
        if system == reference:
            continue
        paired_studies = studies(by_system.get(reference, {}), by_system[system])
        pooled, effect = pool(paired_studies)
        versus.append(Versus(system=system, studies=tuple(paired_studies), pooled=pooled, effect=effect,
                             testable=testable(paired_studies, pooled),
                             verdict=Tally(**{v: sum(s.verdict == v for s in paired_studies) for v in VERDICTS})))
    effects = {v.system: v.effect for v in versus} | ({reference: 0.0} if reference in systems else {})
    order = sorted(systems, key=lambda s: (-effects.get(s, 0.0), s))
    return Compared(metric=METRIC, reference=reference, systems=tuple(order), datasets=tuple(datasets),
                    scores=tuple(scores), versus=tuple(versus))
