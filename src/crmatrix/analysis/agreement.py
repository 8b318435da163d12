"""Rank agreement: do two task sets order the same configurations alike?

A benchmark made cheaply (tasks from a repository's own history) is worth having if it ranks
systems as an established one (SWE-bench) does. Each configuration has one value per task in
each set; its mean per set orders the configurations, and the two orders are compared by
Kendall's tau-b and Spearman's rho (both defined with ties, as scipy.stats.kendalltau and
spearmanr give them; numpy here, since the analysis does not import scipy.stats). The interval
resamples tasks with replacement within each set, independently (the sets share no task), and
recomputes both orders' means and the coefficients: a percentile interval (quantiles linear
between order statistics, as `stats.bootstrap_ci`). A resample in which either order is all
ties has no coefficient (tau and rho divide by zero there); it is counted and left out of the
interval, never read as 0.

Configurations whose per-task values are identical in both sets are one system under two names
(an arm that leaves a method's ranking unchanged): counted once (`collapse_identical`), else
their tie would be read as agreement."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


def _signs(x: np.ndarray) -> np.ndarray:
    """sign(x_i - x_j) for every pair, over the last axis: shape (..., n, n)."""
    return np.sign(x[..., :, None] - x[..., None, :])


def kendall_tau(x, y) -> np.ndarray:
    """Kendall's tau-b of x and y along the last axis (a batch of pairs of orders at once); NaN
    where either is constant. Concordant minus discordant pairs over the square root of the
    product of the pairs untied in x and in y."""
    sx, sy = _signs(np.asarray(x, dtype=float)), _signs(np.asarray(y, dtype=float))
    s = (sx * sy).sum(axis=(-2, -1)) / 2
    untied = np.abs(sx).sum(axis=(-2, -1)) / 2 * (np.abs(sy).sum(axis=(-2, -1)) / 2)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(untied > 0, s / np.sqrt(untied), np.nan)


def average_ranks(x) -> np.ndarray:
    """1-based ranks along the last axis, ties sharing their mean rank (scipy's 'average')."""
    x = np.asarray(x, dtype=float)
    below = (x[..., None, :] < x[..., :, None]).sum(axis=-1)
    equal = (x[..., None, :] == x[..., :, None]).sum(axis=-1)
    return below + (equal + 1) / 2


def spearman_rho(x, y) -> np.ndarray:
    """Spearman's rho along the last axis: Pearson's r of the average ranks; NaN where either is
    constant."""
    rx, ry = average_ranks(x), average_ranks(y)
    rx = rx - rx.mean(axis=-1, keepdims=True)
    ry = ry - ry.mean(axis=-1, keepdims=True)
    norm = np.sqrt((rx * rx).sum(axis=-1) * (ry * ry).sum(axis=-1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(norm > 0, (rx * ry).sum(axis=-1) / norm, np.nan)


COEFFICIENTS = {"kendall_tau": kendall_tau, "spearman_rho": spearman_rho}


@dataclass(frozen=True)
class Agreement:
    """One coefficient between the two orders: its value on the tasks as they are, its
    percentile interval over the resamples that define it, and how many did not."""
    name: str
    value: float | None
    ci_low: float | None
    ci_high: float | None
    undefined: int


def collapse_identical(names: Sequence[str], a: np.ndarray, b: np.ndarray) -> tuple[list[int], dict[str, list[str]]]:
    """The rows (configurations) to keep, in order: the first of each group whose rows of `a` and
    of `b` (configurations x tasks) are equal, and each kept name's equals by name."""
    kept, seen, merged = [], {}, {}
    for i, name in enumerate(names):
        key = (a[i].tobytes(), b[i].tobytes())
        if key in seen:
            merged.setdefault(names[seen[key]], []).append(name)
            continue
        seen[key] = i
        kept.append(i)
    return kept, merged


def agreement(a, b, n_resamples: int = 1000, seed: int = 0, level: float = 0.95,
              resample: tuple[str, ...] = ("a", "b")) -> list[Agreement]:
    """Kendall's tau-b and Spearman's rho between the orders of the configurations (rows) by
    their mean over the tasks (columns) of `a` and of `b`, with bootstrap intervals: one
    `default_rng(seed)` draws the (n_resamples, tasks) indices of `a`, then those of `b`.
    `resample` names the sets resampled; one left out keeps its tasks as they are, in every
    draw (the same indices drawn all the same): how much of the interval is each set's."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.ndim != 2 or b.ndim != 2 or a.shape[0] != b.shape[0] or 0 in (a.shape[1], b.shape[1]):
        raise ValueError(f"agreement: two matrices of the same configurations by at least one task each, "
                         f"got shapes {a.shape} and {b.shape}")
    rng = np.random.default_rng(seed)
    ia = rng.integers(0, a.shape[1], (n_resamples, a.shape[1]))
    ib = rng.integers(0, b.shape[1], (n_resamples, b.shape[1]))
    if not set(resample) <= {"a", "b"}:
        raise ValueError(f"agreement: resample names the sets 'a' and 'b', got {resample}")
    ma = a[:, ia].mean(axis=-1).T if "a" in resample else np.tile(a.mean(axis=1), (n_resamples, 1))
    mb = b[:, ib].mean(axis=-1).T if "b" in resample else np.tile(b.mean(axis=1), (n_resamples, 1))
    alpha = np.float64((1 - level) / 2)
    out = []
    for name, f in COEFFICIENTS.items():
        point = float(f(a.mean(axis=1), b.mean(axis=1)))
        draws = f(ma, mb)
        defined = draws[~np.isnan(draws)]
        low, high = (float(q) for q in np.quantile(defined, [alpha, 1 - alpha])) if defined.size else (None, None)
        out.append(Agreement(name=name, value=None if np.isnan(point) else point, ci_low=low, ci_high=high,
                             undefined=int(n_resamples - defined.size)))
    return out
