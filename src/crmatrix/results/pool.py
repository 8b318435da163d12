"""One arm pooled across datasets (`crmatrix.analysis.matrix.pooling`), and what the matrix can
tell (`crmatrix.analysis.matrix.power`): the phase matrix's `pooled` and `power` blocks."""

from __future__ import annotations

from dataclasses import dataclass

from crmatrix.jsontypes import JsonType


@dataclass(frozen=True, kw_only=True)
class Study(JsonType):
    """One dataset as a study of an arm: its paired Δ, the Δ's standard error and normal interval, its verdict."""
    dataset: str
    language: str
    split: str | None
    n: int
    delta: float
    se: float
    ci_low: float
    ci_high: float
    verdict: str
    identical_to: str | None


@dataclass(frozen=True, kw_only=True)
class Pooled(JsonType):
    """A random-effects pool (`meta.random_effects`), its weights by dataset."""
    k: int
    estimate: float
    se: float
    ci_low: float
    ci_high: float
    tau2: float
    q: float
    df: int
    i2: float | None
    weights: dict[str, float]

    @classmethod
    def of(cls, pooled: dict, datasets) -> Pooled:
        """`crmatrix.analysis.meta.random_effects`' pool of the studies of `datasets`, in their order."""
        return cls(**{**pooled, "weights": dict(zip(datasets, pooled["weights"], strict=True))})


# A dataset's verdict on an arm, or on a system against the reference: the sign of a Δ outside
# the flat band, else inert.
VERDICTS = ("positive", "negative", "inert")


@dataclass(frozen=True, kw_only=True)
class Tally(JsonType):
    """How many studies said what (VERDICTS)."""
    positive: int
    negative: int
    inert: int


@dataclass(frozen=True, kw_only=True)
class PoolGroup(JsonType):
    group: str
    kind: str  # "language", "overall" or "split"
    datasets: tuple[str, ...]
    unvaried: tuple[str, ...]  # counted, not pooled: their Δ did not vary over queries
    verdict: Tally
    pooled: Pooled | None


@dataclass(frozen=True, kw_only=True)
class PoolEntry(JsonType):
    """One (system, arm): each dataset's Δ and its pools."""
    system: str
    arm: str
    studies: tuple[Study, ...]
    groups: tuple[PoolGroup, ...]


@dataclass(frozen=True, kw_only=True)
class Judged(JsonType):
    """One arm of a pooled group: its pooled Δ and interval, the interval's half-width, the Δ
    the pool detects, the verdict, and how many of the group's queries it moved."""
    delta: float
    ci: tuple[float, float]
    half_width: float
    mde: float
    verdict: str  # positive, negative, flat or undecided
    moved: int


@dataclass(frozen=True, kw_only=True)
class PowerGroup(JsonType):
    """A pooled group: its datasets and queries, each arm judged, and the group's MDE: the median
    of the MDEs of `mde_arms`, the arms that moved at least `Power.moved_share` of its queries
    (None: no arm did)."""
    group: str
    kind: str  # "language", "benchmark" or "overall"
    system: str
    datasets: int
    queries: int
    mde: float | None
    mde_arms: tuple[str, ...]
    arms: dict[str, Judged]


@dataclass(frozen=True, kw_only=True)
class PowerRow(JsonType):
    dataset: str
    system: str
    n: int
    hypotheses: int
    mde: float | None
    mde_rel: float | None


@dataclass(frozen=True, kw_only=True)
class Power(JsonType):
    method: str
    metric: str
    alpha: float
    target_power: float
    moved_share: float  # the share of a group's queries an arm moves to count in the group's MDE
    rows: tuple[PowerRow, ...]
    groups: tuple[PowerGroup, ...]
