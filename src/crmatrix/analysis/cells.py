"""One cell of the phase matrix: an arm's run of a (dataset, system), against the baseline's run of it.

Everything the matrix says of a cell that depends on that cell's queries alone is computed
here, once per cell (the workflow's `cell_stats` job), so that a new or changed run costs its
own cell's statistics and no other's: the mean of the headline metric with its bootstrap
interval, and against the baseline Δ with its paired bootstrap interval, the paired
randomization test (p before any correction), McNemar, the spread of the per-query
differences (the detectable effect's input), the effect band and which queries moved; then a
fingerprint of the answers (which arms repeat one another), the hybrid diagnostics, the
recall@10 the structural gate reads, a public benchmark's metrics with their intervals, each
query's metric, failure and time (what two arms or two systems are compared by), and in the
baseline's cell every other method of the run against the headline one.
What depends on a whole row or on the whole matrix (which arms are one hypothesis, Holm's
correction, the detectable effect, roll-ups, pools) is `crmatrix.analysis.matrix`'s.

A cell is a `crmatrix.results.cell.Cell`.
"""

from __future__ import annotations

from crmatrix import atomic
from crmatrix.analysis import stats
from crmatrix.evaluation import metrics
from crmatrix.results.cell import (
    GATE_METRIC,
    METRIC,
    Benchmark,
    Cell,
    CellStats,
    Comparison,
    Decomposition,
    FormatFacts,
    MethodComparison,
    QueryScore,
    Scored,
    Stratum,
)
from crmatrix.results.run import QueryRow, Run

# Public benchmarks (every format but the hand-built ones) report these beside the MRR, each
# with its bootstrap interval; pass@1 (RepoQA's) is whether the first hit is the gold: acc@1.
BENCHMARK_METRICS = ("recall@5", "recall@10", "ndcg@10")
# What a comparison with the baseline adds to a cell, as stats.compare_arm names it.
COMPARED = ("delta_abs", "delta_rel", "band", "direction", "sd_diff", "p_randomization", "mcnemar_b", "mcnemar_c",
            "p_mcnemar", "improved", "regressed", "unchanged")


def headline_method(run: Run, preferred: str) -> str:
    """`preferred` when the run has it, else the first method the system's config lists.

    The order comes from the system config recorded in the provenance: the run's own
    `methods` object is written with sorted keys, so its first key is the alphabetical one.
    """
    methods = run.provenance.system.methods
    return preferred if preferred in methods else methods[0]


def _stats(run: Run, method: str, rows: tuple[QueryRow, ...]) -> dict:
    """The headline metric's mean and interval, and what makes a cell read differently from
    what its arm says: values the system clamped (from the builtin engine's provenance),
    queries that failed (scored as misses; by kind), a blob system's rank-1 scoring, and
    answers that mostly resolved no hit (accounting.NO_HIT_SHARE); and for a gold finer than
    files the headline metric at file level with its interval."""
    result = run.methods[method]
    values = metrics.per_query(rows, METRIC)
    low, high = stats.bootstrap_ci(values)
    failures = {k: n for k, n in result.failures.items() if n}
    return {"mean": _mean(values), "ci_low": low, "ci_high": high, "n": len(rows), "clamped": tuple(run.clamped),
            "failed": sum(failures.values()), "failures": failures,
            "response": "blob" if result.response == "blob" else None,
            "no_hit": result.no_hit if result.no_hit_warning else None,
            "file_level": with_ci(_file_values(rows)) if _finer(rows) else None}


def _finer(rows: tuple[QueryRow, ...]) -> bool:
    """Whether the rows' gold is finer than files: they carry their file level (`file_level`)."""
    return bool(rows) and all(q.file_level is not None for q in rows)


def _file_values(rows: tuple[QueryRow, ...]):
    return metrics.per_query([metrics.file_row(q) for q in rows], METRIC)


def query_scores(rows: tuple[QueryRow, ...]) -> tuple[QueryScore, ...]:
    """Each query's headline metric (and at file level, for a gold finer than files), failure,
    outcome (when it named nothing) and search time, by task id."""
    values = metrics.per_query(rows, METRIC)
    files = _file_values(rows) if _finer(rows) else [None] * len(rows)
    return tuple(sorted((QueryScore(task_id=q.task_id, value=float(v), failure=q.failure, outcome=q.outcome,
                                    elapsed_ms=q.elapsed_ms, file=None if f is None else float(f))
                         for q, v, f in zip(rows, values, files, strict=True)), key=lambda q: q.task_id))


def other_methods(run: Run, method: str) -> dict[str, MethodComparison]:
    """Every other method of `run` against `method` on the same queries: the paired Δ of the
    headline metric, its randomization p, and Holm's across these methods (the family a
    claim "another method beats the headline" is one of)."""
    rows = run.methods[method].queries
    others = [m for m in sorted(run.methods) if m != method]
    compared = [stats.compare_arm(rows, run.methods[m].queries, METRIC) for m in others]
    adjusted = stats.holm([c["p_randomization"] for c in compared])
    return {m: MethodComparison(mean=c["arm"], delta_abs=c["delta_abs"], p_randomization=c["p_randomization"],
                                p_holm=p) for m, c, p in zip(others, compared, adjusted, strict=True)}


def answers(run: Run, method: str) -> str:
    """A fingerprint of what a run answered per query under `method`, timing and the raw
    answer's excerpt aside (a tool may print its own timing): equal fingerprints are equal results."""
    return atomic.hash_obj(sorted(({k: v for k, v in q.to_json().items() if k not in ("elapsed_ms", "excerpt")}
                                   for q in run.methods[method].queries), key=lambda q: q["task_id"]))


def _mean(values) -> float:
    return float(values.mean()) if values.size else 0.0


def with_ci(values) -> Scored:
    """The mean of these per-query values with its bootstrap interval."""
    low, high = stats.bootstrap_ci(values)
    return Scored(mean=_mean(values), ci_low=low, ci_high=high)


def _scores(rows, names: dict[str, str]) -> dict[str, Scored]:
    return {label: with_ci(metrics.per_query(rows, metric)) for label, metric in names.items()}


def _benchmark(queries: tuple[QueryRow, ...], fmt: FormatFacts) -> Benchmark:
    """A public benchmark's recall@5/10, ndcg@10 (and pass@1, or localization's Acc@1/3/5/10,
    where its format reports them) with bootstrap intervals, and the same per stratum
    (repository or library) when the tasks have more than one."""
    names = {**({"pass@1": "acc@1"} if fmt.pass_at_1 else {}),
             **({m: m for m in metrics.LOCALIZATION} if fmt.localization else {}), **{m: m for m in BENCHMARK_METRICS}}
    strata: dict[str, list[QueryRow]] = {}
    for q in queries:
        strata.setdefault(q.stratum or "", []).append(q)
    by_id = sorted(queries, key=lambda q: q.task_id)
    return Benchmark(metrics=tuple(names), scores=_scores(queries, names),
                     strata={k: Stratum(n=len(v), scores=_scores(v, names)) for k, v in sorted(strata.items())}
                     if len(strata) > 1 else None,
                     values={label: tuple(float(v) for v in metrics.per_query(by_id, metric))
                             for label, metric in names.items()})


def cell(run: Run, base: Run | None, preferred: str, fmt: FormatFacts | None = None) -> Cell:
    """The statistics of `run`'s cell: against `base` (the baseline arm's run of the same
    dataset and system) unless it is None, as for the baseline's own cell. `fmt`: the facts of
    the dataset's format (`Format.matrix_facts`; a public benchmark's cell holds its metrics)."""
    method = headline_method(base or run, preferred)
    rows = run.methods[method].queries
    compared = decomposition = None
    if base is not None:
        base_rows = base.methods[method].queries
        cmp = stats.compare_arm(base_rows, rows, METRIC)
        compared = Comparison(**{k: cmp[k] for k in COMPARED}, delta_ci_low=cmp["ci_low"],
                              delta_ci_high=cmp["ci_high"])
        decomposition = Decomposition.from_json(stats.decompose(base_rows, rows), "decomposition")
    diagnostics = stats.hybrid_diagnostics({m: r.queries for m, r in run.methods.items()})
    corpus = run.provenance.corpus
    return Cell(dataset=run.dataset, system=run.system, arm=run.arm, baseline=None if base is None else base.arm,
                method=method, corpus=corpus.name, language=corpus.language, format=fmt,
                cell=CellStats(**_stats(run, method, rows), compared=compared), answers=answers(run, method),
                decomposition=decomposition,
                hybrid_diagnostics={k: v["count"] for k, v in diagnostics.items()} or None,
                gate_metric=_mean(metrics.per_query(rows, GATE_METRIC)),
                benchmark=_benchmark(rows, fmt) if fmt is not None and fmt.benchmark else None,
                token_efficiency=run.methods[method].token_efficiency, queries=query_scores(rows),
                methods=other_methods(run, method) if base is None else {},
                granularity=run.methods[method].granularity)
