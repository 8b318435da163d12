"""Systems compared with one another: each system's headline metric per dataset, and each
system against the reference system (config `reference_system`), pooled over datasets.

A comparison of two systems is paired on the queries BOTH answered: a query that failed on
either side (crash, timeout, bad output, budget) is left out of that dataset's Δ, so one
tool's failures never count as the other's win; how many were left out is reported beside
the Δ. Each dataset is then a study (Δ, its standard error sd_diff/√n), pooled by random
effects as the arms are (`crmatrix.analysis.matrix.pooling`); the leaderboard orders the
systems by that pooled Δ (the reference's own is 0). Runs are the baseline arm's: systems
are compared as they ship.
"""

from __future__ import annotations

import math

from crmatrix.analysis import meta, stats
from crmatrix.analysis.cells import headline_method
from crmatrix.evaluation import metrics
from crmatrix.results.cell import METRIC
from crmatrix.results.pool import VERDICTS, Pooled, Tally
from crmatrix.results.run import QueryRow, Run
from crmatrix.results.versus import Compared, PairedStudy, Score, Versus


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


def score(rows: list[QueryRow]) -> dict:
    """The headline metric's mean over every query (a failed one scores as a miss) with its
    bootstrap interval, and the failures by kind."""
    values = metrics.per_query(rows, METRIC)
    low, high = stats.bootstrap_ci(values)
    failures: dict[str, int] = {}
    for r in rows:
        if r.failure:
            failures[r.failure] = failures.get(r.failure, 0) + 1
    return {"mean": float(values.mean()) if values.size else 0.0, "ci_low": low, "ci_high": high, "n": len(rows),
            "failed": sum(failures.values()), "failures": dict(sorted(failures.items()))}


def paired(ref_rows: list[QueryRow], rows: list[QueryRow]) -> dict | None:
    """The system's Δ against the reference on the queries both answered (None: there are none)."""
    ref = {r.task_id: r for r in ref_rows if not r.failure}
    own = {r.task_id: r for r in rows if not r.failure}
    both = sorted(ref.keys() & own.keys())
    if not both:
        return None
    cmp = stats.compare_arm([ref[t] for t in both], [own[t] for t in both], METRIC)
    se = cmp["sd_diff"] / math.sqrt(cmp["n"])
    low, high = meta.normal_interval(cmp["delta_abs"], se)
    verdict = "inert" if cmp["band"] == "flat" else "positive" if cmp["delta_abs"] > 0 else "negative"
    return {"n": cmp["n"], "left_out": len({r.task_id for r in rows} | {r.task_id for r in ref_rows}) - len(both),
            "reference_mean": cmp["base"], "system_mean": cmp["arm"], "delta": cmp["delta_abs"], "se": se,
            "ci_low": low, "ci_high": high, "bootstrap_ci": (cmp["ci_low"], cmp["ci_high"]),
            "p_randomization": cmp["p_randomization"], "verdict": verdict}


def _by_cell(runs: list[Run], preferred: str) -> dict[tuple[str, str], dict]:
    out = {}
    for run in runs:
        method, rows = headline_rows(run, preferred)
        out[(run.dataset, run.system)] = {"method": method, "rows": rows,
                                          "language": run.provenance.corpus.language or "?"}
    return out


def compare(runs: list[Run], reference: str, preferred: str) -> Compared:
    """Every system's score per dataset, and each other system against `reference` per dataset
    and pooled; `systems` in leaderboard order (pooled Δ, highest first; then by name).

    `runs`: the baseline arm's runs of each system on each dataset; `preferred`: the config's
    headline method (a system without it is scored on its first method)."""
    cells = _by_cell(runs, preferred)
    systems = sorted({s for _, s in cells})
    datasets = sorted({d for d, _ in cells})
    scores = [Score(dataset=d, system=s, method=c["method"], language=c["language"], **score(c["rows"]))
              for (d, s), c in sorted(cells.items())]
    versus = []
    for system in systems:
        if system == reference:
            continue
        studies = []
        for d in datasets:
            if (d, system) in cells and (d, reference) in cells:
                p = paired(cells[(d, reference)]["rows"], cells[(d, system)]["rows"])
                if p is not None:
                    studies.append(PairedStudy(dataset=d, language=cells[(d, system)]["language"], **p))
        varied = [s for s in studies if s.se > 0]
        pooled = meta.random_effects([s.delta for s in varied], [s.se ** 2 for s in varied]) if varied else None
        pooled = None if pooled is None else Pooled.of(pooled, (s.dataset for s in varied))
        # without varied studies (every paired difference the same), the plain mean of the Δs
        effect = pooled.estimate if pooled else (sum(s.delta for s in studies) / len(studies) if studies else 0.0)
        versus.append(Versus(system=system, studies=tuple(studies), pooled=pooled, effect=effect,
                             verdict=Tally(**{v: sum(s.verdict == v for s in studies) for v in VERDICTS})))
    effects = {v.system: v.effect for v in versus} | ({reference: 0.0} if reference in systems else {})
    order = sorted(systems, key=lambda s: (-effects.get(s, 0.0), s))
    return Compared(metric=METRIC, reference=reference, systems=tuple(order), datasets=tuple(datasets),
                    scores=tuple(scores), versus=tuple(versus))
