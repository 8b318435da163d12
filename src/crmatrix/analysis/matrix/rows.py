"""A row of the phase matrix, one (dataset, system), from the statistics of its cells
(`crmatrix.analysis.cells`): which arms repeat another's answers, the row's family of
hypotheses with Holm's correction across it, and the effect its queries can detect."""

from __future__ import annotations

import math
from dataclasses import replace

from crmatrix import CrmatrixError
from crmatrix.analysis import stats
from crmatrix.jsontypes import members
from crmatrix.results.cell import Cell, MethodComparison
from crmatrix.results.row import Corrected, Detectable, MatrixCell, PlainRow, Row


def significant(p_holm: float | None) -> bool:
    return p_holm is not None and p_holm < stats.ALPHA


def _identical_to(docs: dict[str, Cell], arms: list[str]) -> dict[str, str]:
    """arm -> the first arm, in column order, whose per-query results it repeats exactly."""
    first: dict[str, str] = {}
    out = {}
    for arm in (a for a in arms if a in docs):
        out[arm] = first.setdefault(docs[arm].answers, arm)
    return {a: same for a, same in out.items() if same != a}


def _family(cells: dict[str, MatrixCell], baseline: str, comparisons: list[str] | None) -> list[str]:
    """The row's hypotheses, in column order: one per distinct answer set against the baseline
    (an arm identical to another is that arm's hypothesis; one identical to the baseline is
    none), narrowed to the arms of `comparisons` when it is given. An arm under which no
    query's metric moved is none either: every sign flip of its all-zero differences gives
    p = 1, and whether a query moved is the same under every flip, so leaving it out keeps
    the others' error rate (Tarone's argument) while it would only take their power."""
    family: dict[str, None] = {}
    for arm, cell in cells.items():
        same = cell.identical_to or arm
        if (cell.compared is not None and same != baseline and cell.compared.moved
                and (comparisons is None or arm in comparisons)):
            family[same] = None
    return list(family)


def _correct(cells: dict[str, MatrixCell], baseline: str, family: list[str]) -> dict[str, float | None]:
    """Holm across the family: each compared arm's p; an identical arm takes its twin's, one
    identical to the baseline or moving no query 1, and an arm outside the family None (its
    unadjusted p stays)."""
    adjusted = dict(zip(family, stats.holm([cells[a].compared.p_randomization for a in family]), strict=True))
    out = {}
    for arm, cell in cells.items():
        if cell.compared is not None:
            same = cell.identical_to or arm
            out[arm] = 1.0 if same == baseline or not cell.compared.moved else adjusted.get(same)
    return out


def _detectable(cells: dict[str, MatrixCell], family: list[str], n: int, base_mean: float | None
                ) -> tuple[Detectable, dict[str, int | None]]:
    """The row's minimum detectable effect: its family's pooled per-query sd of differences, at
    the Bonferroni level alpha/m that bounds Holm's first step, with 80 % power; and for each
    compared cell the queries its Δ would need at that level. A flat Δ (under 1 % of the
    baseline, the band the matrix calls no effect) needs none: detecting it would tell nothing,
    and a Δ of rounding noise would ask for
    millions of queries."""
    alpha = stats.ALPHA / max(len(family), 1)
    sd = math.sqrt(sum(cells[a].compared.sd_diff ** 2 for a in family) / len(family)) if family else None
    mde = stats.detectable_effect(sd, n, alpha) if family else None
    needed = {arm: None if c.compared.band == "flat" else stats.queries_needed(c.compared.sd_diff,
                                                                                c.compared.delta_abs, alpha)
              for arm, c in cells.items() if c.compared is not None}
    return Detectable(abs=mde, rel=mde / base_mean if mde is not None and base_mean else None, sd_diff=sd,
                      alpha=alpha, power=stats.POWER, n=n), needed


def _check_baseline(docs: dict[str, Cell], baseline: str) -> None:
    for arm, doc in docs.items():
        if doc.baseline not in (None, baseline):
            raise CrmatrixError(f"cell {doc.dataset}/{doc.system}/{arm}: compared with arm {doc.baseline!r}, "
                                f"expected the matrix's baseline {baseline!r}")


def plain(dataset: str, system: str, docs: dict[str, Cell], arms: list[str], baseline: str,
          split: str | None = None) -> PlainRow:
    """A row before anything decided across its family of hypotheses: its cells, each marked
    with the first arm of `arms` whose answers it repeats (so among the arms handed in alone),
    and the row's facts. `docs`: arm -> its cell's statistics, in the order the cells came (the
    first stands for the row when the baseline's is missing)."""
    _check_baseline(docs, baseline)
    head = docs.get(baseline) or next(iter(docs.values()))
    present = [a for a in arms if a in docs]
    same = _identical_to(docs, arms)
    cells = {a: MatrixCell(**members(docs[a].cell), identical_to=same.get(a)) for a in present}
    return PlainRow(dataset=dataset, system=system, method=head.method, corpus=head.corpus, language=head.language,
                    split=split, n=cells[present[0]].n, cells=cells)


def row(dataset: str, system: str, docs: dict[str, Cell], arms: list[str], baseline: str, archetype: str | None,
        split: str | None = None, comparisons: list[str] | None = None) -> Row:
    """`plain`'s row with Holm's correction across its family, the effect it can detect, and
    the decompositions and diagnostics of its cells."""
    out = plain(dataset, system, docs, arms, baseline, split)
    family = _family(out.cells, baseline, comparisons)
    p_holm = _correct(out.cells, baseline, family)
    base = out.cells.get(baseline)
    detectable, needed = _detectable(out.cells, family, out.n, base.mean if base is not None else None)
    # a cell is paired with the baseline on its n queries (both cover the same tasks)
    cells = {a: c if c.compared is None else replace(c, corrected=Corrected(
        p_holm=p_holm[a], queries_needed=needed[a], testable=c.n >= stats.MIN_QUERIES)) for a, c in out.cells.items()}
    present = list(cells)
    head = docs.get(baseline) or next(iter(docs.values()))
    return Row(**{**members(out), "cells": cells}, archetype=archetype, family=tuple(family), detectable=detectable,
               decomposition={a: docs[a].decomposition for a in present if docs[a].decomposition is not None},
               # in the categories' own order: a cell file holds them sorted by name
               hybrid_diagnostics={a: {k: docs[a].hybrid_diagnostics[k] for k in stats.HYBRID_CATEGORIES}
                                   for a in present if docs[a].hybrid_diagnostics},
               token_efficiency=head.token_efficiency, beaten_by=beaten_by(docs.get(baseline)))


def beaten_by(base: Cell | None) -> dict[str, MethodComparison]:
    """The methods of the baseline's run that beat its headline method beyond noise: a higher
    mean, and Holm's p across the run's other methods below alpha (none without a baseline cell)."""
    return {m: c for m, c in (base.methods if base is not None else {}).items()
            if c.delta_abs > 0 and significant(c.p_holm)}
