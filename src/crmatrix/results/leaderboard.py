"""The phase matrix's rankings (`crmatrix.analysis.matrix.leaderboard` computes them): the
leaderboard of its systems against the reference, and each system's arms across its datasets,
each with the separation of its adjacent pairs (`crmatrix.analysis.ranks`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from crmatrix.jsontypes import JsonType, key, omitted
from crmatrix.results.cell import METRIC
from crmatrix.results.pool import Pooled


@dataclass(frozen=True, kw_only=True)
class Separation(JsonType):
    """Two neighbours of an ordering: the paired Δ upper − lower pooled over the datasets both
    ran (each on the queries both answered), its interval, its p and Holm's across the
    ordering's pairs (None: nothing to test), and the mark: "separated", "tied" or "not testable"
    (too few queries both answered, or no spread to test: `crmatrix.analysis.versus.testable`)."""
    upper: str
    lower: str
    datasets: int
    queries: int
    delta: float
    ci: tuple[float, float] | None
    p: float | None
    p_holm: float | None
    mark: str


@dataclass(frozen=True, kw_only=True)
class Standing(JsonType):
    """A system on the leaderboard, as it ships (the baseline arm, its headline method): its
    datasets and queries, its macro mean, its pooled Δ against the reference (None for the
    reference itself) with the pool (None: no dataset varied), the queries it was paired on
    and whether the paired test can judge its Δ (None for the reference), its failures, its
    answers naming nothing (`empty`) or nothing of the corpus (`unresolved`:
    crmatrix.evaluation.accounting), and its search latency over all its queries."""
    system: str
    method: str
    rank: int
    datasets: int
    queries: int
    mean: float = field(metadata=key(METRIC))
    delta: float | None
    pooled: Pooled | None
    paired: int | None
    testable: bool | None
    failed: int
    failures: dict[str, int]
    latency_ms: dict[str, float]  # p50, p95
    empty: int = omitted(0)
    unresolved: int = omitted(0)


@dataclass(frozen=True, kw_only=True)
class Board(JsonType):
    """The systems in order of their pooled Δ against the reference, with their ranks."""
    reference: str
    standings: tuple[Standing, ...]
    pairs: tuple[Separation, ...]


@dataclass(frozen=True, kw_only=True)
class Leaderboard(Board):
    """The board at `level`, the finest every system answers (crmatrix.hits: "file" when one
    answers files, else "symbol": each query scored at its gold's level); at file level, the
    board of the systems answering symbols at the gold's level too (None: none, or the reference
    answers files)."""
    level: str | None = omitted()  # None: a matrix from before levels were told apart
    file_systems: tuple[str, ...] = omitted(())  # the systems answering files, by name
    symbol_level: Board | None = omitted()


@dataclass(frozen=True, kw_only=True)
class RankedArm(JsonType):
    """An arm of a system in order of its pooled Δ against the baseline over the system's plain
    datasets (the baseline's own is 0)."""
    arm: str
    rank: int
    delta: float


@dataclass(frozen=True, kw_only=True)
class ArmRanking(JsonType):
    system: str
    datasets: tuple[str, ...]
    arms: tuple[RankedArm, ...]
    pairs: tuple[Separation, ...]
