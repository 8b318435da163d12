"""The phase matrix (`results/matrix/phase-matrix.json`): its rows (`crmatrix.results.row`), its
roll-ups, knobs, gates and public benchmarks, per dataset and pooled over a benchmark's splits
(`crmatrix.analysis.matrix.rollups` computes them),
its pools and power (`crmatrix.results.pool`), how its numbers were made, its notes, and its
rankings: the leaderboard of its systems and each system's arms (`crmatrix.results.leaderboard`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from crmatrix.jsontypes import JsonType, flat, key, omitted
from crmatrix.results.cell import METRIC, Scored, Stratum
from crmatrix.results.leaderboard import ArmRanking, Leaderboard
from crmatrix.results.pool import PoolEntry, Power
from crmatrix.results.row import Row


@dataclass(frozen=True, kw_only=True)
class RollupDelta(JsonType):
    """An arm's mean Δ against the baseline over a group's datasets, and how many it bettered or worsened."""
    mean_delta_abs: float
    better: int
    worse: int


@dataclass(frozen=True, kw_only=True)
class RollupCell(JsonType):
    mean: float = field(metadata=key(METRIC))
    datasets: int
    delta: RollupDelta | None = flat()  # None for the baseline, and an arm compared on none of them


@dataclass(frozen=True, kw_only=True)
class Rollup(JsonType):
    """A group of one system's datasets, a language (`by_language`) or an archetype
    (`by_archetype`): each arm's macro average."""
    system: str
    datasets: tuple[str, ...]
    arms: dict[str, RollupCell]
    language: str | None = omitted()  # the group, under the key of its kind
    archetype: str | None = omitted()

    @property
    def group(self) -> str:
        return self.language if self.language is not None else self.archetype


@dataclass(frozen=True, kw_only=True)
class KnobDataset(JsonType):
    dataset: str
    system: str
    delta_abs: float
    delta_rel: float | None
    band: str
    p_holm: float | None
    improved: int
    regressed: int
    identical_to: str | None


@dataclass(frozen=True, kw_only=True)
class KnobLine(JsonType):
    """One arm against the baseline on every dataset."""
    arm: str
    datasets: tuple[KnobDataset, ...]
    better: int
    worse: int
    significant: int


@dataclass(frozen=True, kw_only=True)
class GateArm(JsonType):
    value: float
    passed: bool = field(metadata=key("pass"))


@dataclass(frozen=True, kw_only=True)
class GateRow(JsonType):
    """A structural split's row: each arm's recall@10 of the headline method against the baseline's."""
    dataset: str
    system: str
    metric: str
    baseline: float
    arms: dict[str, GateArm]


@dataclass(frozen=True, kw_only=True)
class Dropped(JsonType):
    tasks: int
    dropped: int
    by_reason: dict[str, int]
    gold: dict | None = omitted()  # a citation format's gold files, and how many a name alone made gold


@dataclass(frozen=True, kw_only=True)
class MethodBenchmark(JsonType):
    """One method of a public benchmark's row under one arm: its metrics (`method_metrics`) with
    their intervals, and the same per stratum (None: one stratum)."""
    scores: dict[str, Scored]
    strata: dict[str, Stratum] | None


@dataclass(frozen=True, kw_only=True)
class BenchmarkEntry(JsonType):
    """A public benchmark's row: each arm's metrics with their intervals, per stratum, and what
    was dropped; then every method of the system, per arm, on `method_metrics` (the MRR added)."""
    dataset: str
    system: str
    method: str
    format: str
    metrics: tuple[str, ...]
    arms: dict[str, dict[str, Scored]]
    strata: dict[str, dict[str, Stratum]]
    dropped: Dropped | None
    method_metrics: tuple[str, ...] = omitted(())
    methods: dict[str, dict[str, MethodBenchmark]] = omitted({})  # arm -> method -> its figures


@dataclass(frozen=True, kw_only=True)
class PooledBenchmark(JsonType):
    """A benchmark split over datasets (a swe-bench dataset, by repository) as the field reports
    it: per arm, each metric over the queries of all its datasets (a micro average) with its
    bootstrap interval; `n` those queries, `datasets` the splits pooled."""
    benchmark: str
    system: str
    method: str
    format: str
    datasets: tuple[str, ...]
    n: int
    metrics: tuple[str, ...]
    arms: dict[str, dict[str, Scored]]
    method_metrics: tuple[str, ...] = omitted(())
    # arm -> method -> metric: every method of the system pooled alike (one its splits all ran)
    methods: dict[str, dict[str, dict[str, Scored]]] = omitted({})


@dataclass(frozen=True, kw_only=True)
class Statistics(JsonType):
    """How the matrix's numbers were made, in words and settings."""
    bootstrap_resamples: int
    seed: int
    level: float
    alpha: float
    min_queries: int  # the fewest paired queries the test can judge: fewer are `not testable`
    test: str
    comparisons: tuple[str, ...] | None
    detectable_effect: str
    pooling: str
    bands: str


@dataclass(frozen=True, kw_only=True)
class LedgerEntry(JsonType):
    """How often a test-split run's config was scored there, and when (crmatrix.datasets.ledger.entries)."""
    dataset: str
    system: str
    arm: str
    split: str
    config: str
    count: int
    dates: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class PhaseMatrix(JsonType):
    """The phase matrix (`results/matrix/phase-matrix.json` is its `to_json`)."""
    KIND = "a phase matrix"

    metric: str
    baseline_arm: str
    arms: tuple[str, ...]  # in column order, the baseline first
    rows: tuple[Row, ...]
    by_language: tuple[Rollup, ...]
    by_archetype: tuple[Rollup, ...]
    knobs: tuple[KnobLine, ...]
    gates: tuple[GateRow, ...]
    pooled: tuple[PoolEntry, ...]
    power: Power
    benchmarks: tuple[BenchmarkEntry, ...]
    test_ledger: tuple[LedgerEntry, ...]
    statistics: Statistics
    notes: dict[str, str] = omitted({})  # a dataset's caveat, shown beside its name
    leaderboard: Leaderboard | None = omitted()  # a matrix of two systems or more
    arm_ranks: tuple[ArmRanking, ...] = omitted(())  # each system with an arm beside the baseline
    pooled_benchmarks: tuple[PooledBenchmark, ...] = omitted(())  # a benchmark split by repository
