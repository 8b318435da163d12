"""A cell's statistics: an arm's run of a (dataset, system) against the baseline's run of it
(`crmatrix.analysis.cells` computes them), as `results/cells/{dataset}/{system}/{arm}.json` holds them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from crmatrix.jsontypes import JsonType, flat, key, omitted, rest
from crmatrix.results.run import TokenEfficiency

METRIC = "mrr"  # the headline metric: a cell's mean, the matrix's tables
# The do-no-harm gate on structural splits (crmatrix.datasets.splits): an arm must not lose recall@10 there.
GATE_METRIC = "recall@10"


@dataclass(frozen=True, kw_only=True)
class FormatFacts(JsonType):
    """What the matrix reads of a dataset's format (crmatrix.datasets.registry.Format.matrix_facts)."""
    name: str
    hand_built: bool
    pass_at_1: bool
    localization: bool = omitted(False)  # reports the field's Acc@k (every gold item within the top k)

    @property
    def benchmark(self) -> bool:
        """Whether a dataset of this format is a public benchmark (every format but the hand-built ones)."""
        return not self.hand_built


@dataclass(frozen=True, kw_only=True)
class Comparison(JsonType):
    """A cell against the baseline's (stats.compare_arm): Δ with its paired interval, the tests, the band."""
    delta_abs: float
    delta_rel: float | None
    delta_ci_low: float
    delta_ci_high: float
    band: str
    direction: str
    sd_diff: float
    p_randomization: float
    mcnemar_b: int
    mcnemar_c: int
    p_mcnemar: float
    improved: int
    regressed: int
    unchanged: int

    @property
    def moved(self) -> bool:
        return self.improved + self.regressed > 0


@dataclass(frozen=True, kw_only=True)
class CellStats(JsonType):
    """The headline metric of a cell with its interval, what makes it read differently (values
    clamped, failed queries by kind, a blob's rank-1 scoring, answers resolving no hit), and
    its comparison with the baseline (None for the baseline's own cell)."""
    mean: float = field(metadata=key(METRIC))
    ci_low: float
    ci_high: float
    n: int
    clamped: tuple[str, ...]
    failed: int
    failures: dict[str, int]
    response: str | None = omitted()  # "blob" for a blob system
    no_hit: int | None = omitted()  # when at least half its answers named nothing of the corpus
    # the headline metric at file level with its interval, for a gold finer than files (None: the
    # gold is files, and `mean` is at file level already)
    file_level: Scored | None = omitted()
    compared: Comparison | None = flat()


@dataclass(frozen=True, kw_only=True)
class Transition(JsonType):
    """One query's first relevant rank under the baseline and under the arm (None: missed)."""
    task_id: str
    query: str | None
    query_type: str
    base_rank: int | None
    arm_rank: int | None
    transition: str  # e.g. "3→1", "miss→2"


@dataclass(frozen=True, kw_only=True)
class Decomposition(JsonType):
    improved: tuple[Transition, ...]
    regressed: tuple[Transition, ...]
    unchanged: tuple[Transition, ...]

    def by(self, direction: str) -> tuple[Transition, ...]:
        return {"improved": self.improved, "regressed": self.regressed, "unchanged": self.unchanged}[direction]


@dataclass(frozen=True, kw_only=True)
class Scored(JsonType):
    mean: float
    ci_low: float
    ci_high: float


@dataclass(frozen=True, kw_only=True)
class Stratum(JsonType):
    n: int
    scores: dict[str, Scored] = rest()  # by metric name


@dataclass(frozen=True, kw_only=True)
class Benchmark(JsonType):
    """A public benchmark's metrics with their bootstrap intervals, per stratum (None: one), and
    each query's value of each metric in task-id order (what the matrix pools a benchmark split
    over datasets by: crmatrix.analysis.matrix.rollups.pooled_benchmarks)."""
    metrics: tuple[str, ...]
    scores: dict[str, Scored]
    strata: dict[str, Stratum] | None
    values: dict[str, tuple[float, ...]]


@dataclass(frozen=True, kw_only=True)
class QueryScore(JsonType):
    """One query of a cell's headline method: its metric (a failed query scores as a miss), its
    failure kind (None: answered), whether its answer named nothing of the corpus (its run's
    `outcome`: empty, unresolved; None: a hit, a miss or a failure) and its search time: what
    the matrix compares two cells of a row or two systems by, without their runs."""
    task_id: str
    value: float = field(metadata=key(METRIC))
    failure: str | None = omitted()
    outcome: str | None = omitted()
    elapsed_ms: float
    file: float | None = omitted()  # the metric at file level, for a gold finer than files (None: `value` is)


@dataclass(frozen=True, kw_only=True)
class MethodComparison(JsonType):
    """Another method of the system against the cell's headline method, on the same queries (the
    baseline arm's cell holds one per other method of its run): its mean, the paired Δ (it minus
    the headline), the randomization test's p and Holm's across the run's other methods."""
    mean: float = field(metadata=key(METRIC))
    delta_abs: float
    p_randomization: float
    p_holm: float


@dataclass(frozen=True, kw_only=True)
class Cell(JsonType):
    KIND = "a cell's statistics"

    dataset: str
    system: str
    arm: str
    baseline: str | None  # the arm it was compared with; None for the baseline's own cell
    method: str
    corpus: str
    language: str | None
    format: FormatFacts | None
    cell: CellStats
    answers: str  # a fingerprint of its answers: equal ones are equal results
    decomposition: Decomposition | None
    hybrid_diagnostics: dict[str, int] | None
    gate_metric: float = field(metadata=key(GATE_METRIC))
    benchmark: Benchmark | None
    token_efficiency: TokenEfficiency | None
    queries: tuple[QueryScore, ...]  # by task id
    granularity: str | None = omitted()  # what its method's hits name (crmatrix.hits; None: not recorded)
    methods: dict[str, MethodComparison] = omitted({})  # the baseline's cell: every other method of its run
    test_scoring: dict[str, Any] | None = None  # its test-split scoring (crmatrix.datasets.ledger.scoring)
