"""Systems compared (`crmatrix.analysis.versus` computes it): each system's headline metric per
dataset, and each system against the reference on the queries both answered, pooled. Not a
file: what the leaderboard's, the versus and the costs charts draw."""

from __future__ import annotations

from dataclasses import dataclass

from crmatrix.jsontypes import JsonType, omitted
from crmatrix.results.pool import Pooled, Tally


@dataclass(frozen=True, kw_only=True)
class Score(JsonType):
    """A system's headline metric on a dataset over every query (a failed one a miss), its failures by
    kind, and its answers naming nothing (`empty`) or nothing of the corpus (`unresolved`)."""
    dataset: str
    system: str
    method: str
    language: str
    mean: float
    ci_low: float
    ci_high: float
    n: int
    failed: int
    failures: dict[str, int]
    empty: int
    unresolved: int


@dataclass(frozen=True, kw_only=True)
class PairedStudy(JsonType):
    """A dataset as a study of a system against the reference, on the queries both answered."""
    dataset: str
    language: str
    n: int
    left_out: int  # queries either side failed
    reference_mean: float
    system_mean: float
    delta: float
    se: float
    ci_low: float
    ci_high: float
    bootstrap_ci: tuple[float, float]
    p_randomization: float
    verdict: str


@dataclass(frozen=True, kw_only=True)
class Versus(JsonType):
    """One system against the reference: per dataset, pooled (None: no dataset varied), the
    effect that orders the leaderboard (the pool's estimate, else the mean Δ), and whether the
    paired test can judge it (`crmatrix.analysis.versus.testable`)."""
    system: str
    studies: tuple[PairedStudy, ...]
    pooled: Pooled | None
    effect: float
    testable: bool
    verdict: Tally


@dataclass(frozen=True, kw_only=True)
class Compared(JsonType):
    metric: str
    reference: str
    systems: tuple[str, ...]  # in leaderboard order
    datasets: tuple[str, ...]
    scores: tuple[Score, ...]
    versus: tuple[Versus, ...]
    level: str | None = omitted()  # what each query is scored at (crmatrix.hits: file or symbol; None: not said)
