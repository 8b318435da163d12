"""What the phase matrix says across its rows: macro averages by language and archetype, one
line per arm over every dataset, the do-no-harm gate on structural splits, and the public
benchmarks' metrics (each from its cells' statistics), the headline method's and every method's,
per dataset and pooled over the datasets a benchmark is split into."""

from __future__ import annotations

import numpy as np

from crmatrix.analysis import cells as cellstats
from crmatrix.analysis import stats
from crmatrix.analysis.matrix.rows import significant
from crmatrix.results.cell import GATE_METRIC, Cell
from crmatrix.results.matrix import (
    BenchmarkEntry,
    Dropped,
    GateArm,
    GateRow,
    KnobDataset,
    KnobLine,
    MethodBenchmark,
    PooledBenchmark,
    Rollup,
    RollupCell,
    RollupDelta,
)
from crmatrix.results.row import Row


def rollup(rows: list[Row], key: str, arms: list[str], baseline: str) -> list[Rollup]:
    """Macro averages over the datasets of each group by `key` ("language" or "archetype"), per
    system (each dataset weighs the same; two systems' numbers are never averaged together)."""
    group_of = {"language": lambda r: r.language, "archetype": lambda r: r.archetype}[key]
    groups: dict[tuple[str, str], list[Row]] = {}
    for r in rows:
        groups.setdefault((r.system, group_of(r) or "?"), []).append(r)
    out = []
    for (system, group), members in sorted(groups.items()):
        cells = {}
        for arm in arms:
            have = [r.cells[arm] for r in members if arm in r.cells]
            if not have:
                continue
            deltas = [c.compared.delta_abs for c in have if c.compared is not None] if arm != baseline else []
            cells[arm] = RollupCell(mean=sum(c.mean for c in have) / len(have), datasets=len(have), delta=RollupDelta(
                mean_delta_abs=sum(deltas) / len(deltas), better=sum(d > 0 for d in deltas),
                worse=sum(d < 0 for d in deltas)) if deltas else None)
        out.append(Rollup(**{key: group}, system=system, datasets=tuple(sorted(r.dataset for r in members)),
                          arms=cells))
    return out


def knob_table(rows: list[Row], arms: list[str], baseline: str) -> list[KnobLine]:
    """One line per arm: how it did against the baseline on every dataset."""
    out = []
    for arm in arms:
        if arm == baseline:
            continue
        per = [KnobDataset(dataset=r.dataset, system=r.system, delta_abs=c.compared.delta_abs,
                           delta_rel=c.compared.delta_rel, band=c.compared.band, p_holm=c.corrected.p_holm,
                           improved=c.compared.improved, regressed=c.compared.regressed, identical_to=c.identical_to)
               for r in rows if (c := r.cells.get(arm)) is not None and c.compared is not None]
        out.append(KnobLine(arm=arm, datasets=tuple(per), better=sum(p.delta_abs > 0 for p in per),
                            worse=sum(p.delta_abs < 0 for p in per),
                            significant=sum(significant(p.p_holm) for p in per)))
    return out


def gates(table: dict[tuple, dict[str, Cell]], rows: list[Row], splits: dict[str, str], arms: list[str],
          baseline: str) -> list[GateRow]:
    """Per structural row: each arm's recall@10 of the headline method against the baseline's."""
    out = []
    for r in rows:
        docs = table[(r.dataset, r.system)]
        if splits.get(r.dataset) != "structural" or baseline not in docs or len(docs) == 1:
            continue  # no split, or nothing to gate: a system that runs the baseline arm alone
        value = {a: docs[a].gate_metric for a in arms if a in docs}
        out.append(GateRow(dataset=r.dataset, system=r.system, metric=GATE_METRIC, baseline=value[baseline],
                           arms={a: GateArm(value=v, passed=v >= value[baseline] - stats.TOLERANCE)
                                 for a, v in value.items() if a != baseline}))
    return out


def benchmarks(table: dict[tuple, dict[str, Cell]], rows: list[Row], arms: list[str], summaries: dict[str, dict]
               ) -> list[BenchmarkEntry]:
    """Per row of a public-benchmark dataset: each arm's metrics with their intervals, the same
    per stratum when there are strata, the rows the loader dropped, by reason, and each arm's
    every method (its cells' `method_benchmarks`) on the method metrics, per stratum too."""
    out = []
    for r in rows:
        docs = table[(r.dataset, r.system)]
        present = [a for a in arms if a in docs]
        fmt = docs[present[0]].format
        if fmt is None or not fmt.benchmark:
            continue
        summary = summaries.get(r.dataset)
        out.append(BenchmarkEntry(
            dataset=r.dataset, system=r.system, method=r.method, format=fmt.name,
            metrics=docs[present[0]].benchmark.metrics, arms={a: docs[a].benchmark.scores for a in present},
            strata={a: docs[a].benchmark.strata for a in present if docs[a].benchmark.strata is not None},
            dropped=None if summary is None else Dropped(tasks=summary["tasks"], dropped=summary["dropped"],
                                                         by_reason=summary["dropped_by_reason"],
                                                         gold=summary.get("gold")),
            **_methods(docs, present)))
    return out


def _methods(docs: dict[str, Cell], present: list[str]) -> dict:
    """A benchmark entry's `method_metrics` and `methods`: per arm, every method of its cell."""
    with_methods = [a for a in present if docs[a].method_benchmarks]
    if not with_methods:
        return {}
    first = docs[with_methods[0]].method_benchmarks
    return {"method_metrics": next(iter(first.values())).metrics,
            "methods": {a: {m: MethodBenchmark(scores=b.scores, strata=b.strata)
                            for m, b in docs[a].method_benchmarks.items()} for a in with_methods}}


def _pooled_methods(docs: list[dict[str, Cell]], present: list[str]) -> dict:
    """A pooled benchmark's `method_metrics` and `methods`: per arm, each method every split ran
    under it, over the queries of all the splits (in dataset order), with bootstrap intervals."""
    out: dict[str, dict] = {}
    names: tuple[str, ...] = ()
    for arm in present:
        common = set.intersection(*(set(d[arm].method_benchmarks) for d in docs))
        for method in sorted(common):
            names = docs[0][arm].method_benchmarks[method].metrics
            out.setdefault(arm, {})[method] = {
                m: cellstats.with_ci(np.concatenate([d[arm].method_benchmarks[method].values[m] for d in docs]))
                for m in names}
    return {"method_metrics": names, "methods": out} if out else {}


def pooled_benchmarks(table: dict[tuple, dict[str, Cell]], arms: list[str], pooled_as: dict[str, str]
                      ) -> list[PooledBenchmark]:
    """Per benchmark split over datasets (`pooled_as`: dataset -> the benchmark it is a split
    of) and system: each arm's metrics over the queries of every split the system ran it on,
    concatenated in dataset order (each in task-id order), with bootstrap intervals: the
    benchmark's figure as the field reports it, one number over all its tasks. An arm missing
    from a split the system ran is left out (a pool over fewer tasks would not be the benchmark's);
    a benchmark of one split has its split's table alone."""
    groups: dict[tuple[str, str], list[str]] = {}
    for dataset, system in sorted(table):
        if dataset in pooled_as:
            groups.setdefault((pooled_as[dataset], system), []).append(dataset)
    out = []
    for (bench, system), datasets in sorted(groups.items()):
        if len(datasets) < 2:  # its one split's table is the benchmark's
            continue
        docs = [table[(d, system)] for d in datasets]
        first = next(iter(docs[0].values()))
        if first.benchmark is None:
            continue
        present = [a for a in arms if all(a in d for d in docs)]
        pooled = {}
        for arm in present:
            values = {m: np.concatenate([d[arm].benchmark.values[m] for d in docs]) for m in first.benchmark.metrics}
            pooled[arm] = {m: cellstats.with_ci(v) for m, v in values.items()}
        out.append(PooledBenchmark(benchmark=bench, system=system, method=first.method, format=first.format.name,
                                   datasets=tuple(datasets), n=sum(next(iter(d.values())).cell.n for d in docs),
                                   metrics=first.benchmark.metrics, arms=pooled, **_pooled_methods(docs, present)))
    return out
