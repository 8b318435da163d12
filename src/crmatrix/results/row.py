"""A row of the phase matrix, one (dataset, system): its cells' statistics and what its family
of hypotheses decided (`crmatrix.analysis.matrix.rows` computes it)."""

from __future__ import annotations

from dataclasses import dataclass

from crmatrix.jsontypes import JsonType, flat, omitted
from crmatrix.results.cell import CellStats, Decomposition, MethodComparison
from crmatrix.results.run import TokenEfficiency


@dataclass(frozen=True, kw_only=True)
class Corrected(JsonType):
    """What a compared cell gets from its row: Holm's p across the family (None: outside it),
    the queries its Δ would need at the family's level (None: a flat Δ, or none needed), and
    whether the paired test can judge it at all (the row's n queries at least
    `crmatrix.analysis.stats.MIN_QUERIES`; below, no outcome is significant)."""
    p_holm: float | None
    queries_needed: int | None
    testable: bool


@dataclass(frozen=True, kw_only=True)
class MatrixCell(CellStats):
    """A cell's statistics in its row: the first arm whose answers it repeats, and (compared
    cells of a whole row) its corrected test."""
    identical_to: str | None
    corrected: Corrected | None = flat()


@dataclass(frozen=True, kw_only=True)
class Detectable(JsonType):
    """The row's minimum detectable effect, absolute and relative to the baseline (None: no family)."""
    abs: float | None
    rel: float | None
    sd_diff: float | None
    alpha: float
    power: float
    n: int


@dataclass(frozen=True, kw_only=True)
class PlainRow(JsonType):
    """A row before anything decided across its family (what a chart fed cells reads)."""
    dataset: str
    system: str
    method: str
    corpus: str
    language: str | None
    split: str | None
    n: int
    cells: dict[str, MatrixCell]  # in column order


@dataclass(frozen=True, kw_only=True)
class Row(PlainRow):
    archetype: str | None
    family: tuple[str, ...]
    detectable: Detectable
    decomposition: dict[str, Decomposition]
    hybrid_diagnostics: dict[str, dict[str, int]]
    token_efficiency: TokenEfficiency | None
    note: str | None = omitted()  # its dataset's caveat (config `note`)
    # the methods of its system that beat its headline method beyond noise (on the baseline arm)
    beaten_by: dict[str, MethodComparison] = omitted({})
