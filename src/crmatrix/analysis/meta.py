"""One arm's effect across datasets: a random-effects pool of per-dataset paired deltas.

Each dataset is a study: its effect is the arm's mean paired difference from the baseline,
its sampling variance sd_diff² / n. Datasets differ in more than noise (a knob that helps
Rust may hurt Python), so the pool is random-effects with DerSimonian–Laird's moment
estimate of the between-dataset variance τ², and I² says how much of the spread is that
heterogeneity rather than chance. Closed-form, so every matrix rebuild gives the same bytes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from scipy.special import ndtr, ndtri  # scipy.stats.norm.cdf and .ppf as ufuncs, without importing scipy.stats

LEVEL = 0.95


def normal_interval(estimate: float, se: float, level: float = LEVEL) -> tuple[float, float]:
    z = float(ndtri(0.5 + level / 2))
    return estimate - z * se, estimate + z * se


def random_effects(effects: Sequence[float], variances: Sequence[float], level: float = LEVEL) -> dict:
    """DerSimonian–Laird pooled estimate of `effects` with sampling `variances` (all > 0).

    Returns k, the estimate with its standard error and normal `level` interval, τ²,
    Cochran's Q on k − 1 degrees of freedom, and I² = max(0, (Q − df) / Q) (None for one study).
    """
    k = len(effects)
    if k == 0 or k != len(variances):
        raise ValueError(f"random_effects: {k} effects and {len(variances)} variances")
    if any(v <= 0 for v in variances):
        raise ValueError("random_effects: every variance must be positive")
    w = [1 / v for v in variances]
    fixed = sum(wi * y for wi, y in zip(w, effects, strict=True)) / sum(w)
    q = sum(wi * (y - fixed) ** 2 for wi, y in zip(w, effects, strict=True))
    df = k - 1
    scale = sum(w) - sum(wi * wi for wi in w) / sum(w)
    tau2 = max(0.0, (q - df) / scale) if df else 0.0
    w_star = [1 / (v + tau2) for v in variances]
    estimate = sum(wi * y for wi, y in zip(w_star, effects, strict=True)) / sum(w_star)
    se = math.sqrt(1 / sum(w_star))
    low, high = normal_interval(estimate, se, level)
    i2 = None if not df else max(0.0, (q - df) / q) if q > 0 else 0.0
    return {"k": k, "estimate": estimate, "se": se, "ci_low": low, "ci_high": high,
            "tau2": tau2, "q": q, "df": df, "i2": i2, "weights": [wi / sum(w_star) for wi in w_star]}


def p_value(estimate: float, se: float) -> float:
    """The two-sided p of a normal estimate with standard error `se` (> 0) against zero: 2 Φ(−|z|)."""
    return float(2 * ndtr(-abs(estimate) / se))
