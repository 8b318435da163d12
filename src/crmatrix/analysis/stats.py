"""Paired comparisons of two runs over the same queries: intervals, tests, bands, and which queries moved.

Every random draw comes from `np.random.default_rng(seed)` (seed 0 unless told), so each
call returns the same numbers and the reports built from them are byte-identical.
The unit of resampling is the query: both arms of a comparison are resampled with one
index matrix, which keeps the pairing that makes the comparison sharp.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import numpy as np

from crmatrix.evaluation import metrics

# Means are compared with this slack so that sums of the same numbers in another order
# (floating noise) count as equal to the observed statistic.
TOLERANCE = 1e-12
# Up to 2**16 sign assignments are enumerated exactly; beyond, they are sampled.
EXACT_MAX_DIFFS = 16
# Sampled sign matrices are drawn in blocks of this many rows to bound memory.
SIGN_BLOCK = 1000
# The power at which a row's minimum detectable effect is stated.
POWER = 0.8
ALPHA = 0.05
# Effect bands, relative to the base: a change under FLAT is flat, one of STRONG or more strong.
FLAT = 0.01
STRONG = 0.05


def bootstrap_ci(values, n_resamples: int = 1000, seed: int = 0, level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean, resampling queries with replacement.

    One (n_resamples, n) index matrix from `default_rng(seed).integers`, in one batch, so the
    interval is a function of the values and the seed alone; the numbers of
    `scipy.stats.bootstrap(method="percentile", vectorized=True)`, bit for bit (a test holds
    them to it), without importing scipy.stats.
    """
    v = np.asarray(values, dtype=float)
    if v.size == 0:
        return (0.0, 0.0)
    if np.all(v == v[0]):  # the resampled means would be v up to rounding; report it exactly
        return (float(v[0]), float(v[0]))
    means = np.sort(v[_resamples(v.size, n_resamples, seed)].mean(axis=-1))
    alpha = np.float64((1 - level) / 2)
    return (_quantile(means, alpha), _quantile(means, 1 - alpha))


@functools.lru_cache(maxsize=4)
def _resamples(n: int, n_resamples: int, seed: int) -> np.ndarray:
    """The (n_resamples, n) index matrix of `default_rng(seed)`: a cell bootstraps several
    metrics of its n queries, and each draws these same indices, so they are drawn once."""
    index = np.random.default_rng(seed).integers(0, n, (n_resamples, n))
    index.flags.writeable = False
    return index


def _quantile(ordered: np.ndarray, p: np.float64) -> float:
    """The p-quantile of sorted values, linear between order statistics (Hyndman and Fan's type
    7), in the arithmetic of `scipy.stats.quantile(method="linear")`."""
    n = ordered.size
    position = p * n + (1 - p)
    upper = position // 1
    g = 0.0 if upper - 1 < 0 else position % 1
    lo, hi = (int(min(max(i, 0), n - 1)) for i in (upper - 1, upper))
    return float((1 - g) * ordered[lo] + g * ordered[hi])


def paired_bootstrap_delta(a, b, n_resamples: int = 1000, seed: int = 0, level: float = 0.95) -> dict:
    """Mean(b) − mean(a) with a bootstrap interval from resampling queries jointly.

    Resampling the per-query differences with one index matrix is the same as applying
    that matrix to both arms.
    """
    a, b = _paired(a, b)
    delta = float(b.mean() - a.mean()) if a.size else 0.0
    low, high = bootstrap_ci(b - a, n_resamples, seed, level)
    return {"delta": delta, "ci_low": low, "ci_high": high}


def _paired(a, b) -> tuple[np.ndarray, np.ndarray]:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"paired arrays differ in length: {a.size} vs {b.size}")
    return a, b


def _all_signs(m: int) -> np.ndarray:
    """Every ±1 assignment to m differences, one per row (2**m rows)."""
    bits = (np.arange(2**m)[:, None] >> np.arange(m)) & 1
    return 2.0 * bits - 1.0


def _at_least(signs: np.ndarray, diffs: np.ndarray, n_queries: int) -> int:
    """How many sign assignments give a |mean difference| at least the observed one."""
    observed = abs(diffs.sum()) / n_queries
    return int(np.sum(np.abs(signs @ diffs) / n_queries >= observed - TOLERANCE))


def _sampled_at_least(diffs: np.ndarray, n_queries: int, n: int, rng: np.random.Generator) -> int:
    count = 0
    for start in range(0, n, SIGN_BLOCK):
        signs = 2.0 * rng.integers(0, 2, size=(min(SIGN_BLOCK, n - start), diffs.size)) - 1.0
        count += _at_least(signs, diffs, n_queries)
    return count


def randomization_test(a, b, n_permutations: int = 10000, seed: int = 0) -> float:
    """Two-sided paired sign-flip test of the mean difference b − a.

    Zero differences are left out of the sign assignments: flipping them changes nothing,
    so enumerating 2**m assignments of the m non-zero ones is exact.

    Not scipy.stats.permutation_test (permutation_type="samples"): given only the non-zero
    pairs it returns the same exact p-values, but enumerates 2**16 assignments about 17×
    slower than this one matrix product, and needs two pairs at least; when sampling, it
    draws other assignments and defines the two-sided p as twice the smaller one-sided p,
    so it cannot give these numbers.
    """
    a, b = _paired(a, b)
    diffs = (b - a)[b != a]
    if diffs.size == 0:
        return 1.0
    if diffs.size <= EXACT_MAX_DIFFS:
        return _at_least(_all_signs(diffs.size), diffs, a.size) / 2**diffs.size
    count = _sampled_at_least(diffs, a.size, n_permutations, np.random.default_rng(seed))
    return (count + 1) / (n_permutations + 1)


def fewest_testable(alpha: float = ALPHA) -> int:
    """The fewest paired queries on which `randomization_test` can reach p < alpha at all.

    Its smallest p on n queries is 2 / 2**n: every difference of one sign, that assignment and
    its mirror the only ones as extreme (exact McNemar's smallest on n discordant pairs is the
    same). Below this n no outcome is significant, so a pair of fewer is not testable: calling
    it tied would read the lack of a test as the lack of a difference."""
    n = 1
    while 2 / 2**n >= alpha:
        n += 1
    return n


# 6 at alpha 0.05: 2 / 2**5 = 0.0625, 2 / 2**6 = 0.03125
MIN_QUERIES = fewest_testable()


def mcnemar_counts(base_hits, arm_hits) -> tuple[int, int]:
    """Discordant pairs: b = base hit and arm miss, c = base miss and arm hit."""
    base, arm = np.asarray(base_hits, dtype=bool), np.asarray(arm_hits, dtype=bool)
    return int(np.sum(base & ~arm)), int(np.sum(~base & arm))


def mcnemar_exact(b: int, c: int) -> float:
    """Exact two-sided McNemar p-value: the discordant pairs against a fair coin, twice the
    binomial tail P(X <= min(b, c)) for X ~ Bin(b + c, 1/2), summed in integers and divided once
    (so correctly rounded; scipy.stats.binom.cdf's incomplete beta agrees to 4e-14, and its
    import would cost a cell_stats job a sixth of a second)."""
    n = b + c
    if n == 0:
        return 1.0
    return min(1.0, 2 * sum(math.comb(n, i) for i in range(min(b, c) + 1)) / 2**n)


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm–Bonferroni adjusted p-values, in input order."""
    p = np.asarray(pvalues, dtype=float)
    order = np.argsort(p, kind="stable")
    scaled = p[order] * (p.size - np.arange(p.size))
    adjusted = np.empty_like(p)
    adjusted[order] = np.minimum(np.maximum.accumulate(scaled), 1.0)
    return adjusted.tolist()


def z_sum(alpha: float, power: float) -> float:
    """z(1 − alpha/2) + z(power): an effect of this many standard errors is found by a two-sided
    test at `alpha` with probability `power` (normal approximation)."""
    from scipy.special import ndtri  # scipy.stats.norm.ppf's ufunc; only the matrix's jobs need it

    return float(ndtri(1 - alpha / 2) + ndtri(power))


def detectable_effect(sd_diff: float, n: int, alpha: float = ALPHA, power: float = POWER) -> float | None:
    """The smallest |mean difference| a two-sided paired test at `alpha` finds with
    probability `power`, for n queries whose differences have standard deviation sd_diff:
    (z(1 − alpha/2) + z(power)) · sd_diff / √n (normal approximation). None for n = 0."""
    if n == 0:
        return None
    return z_sum(alpha, power) * sd_diff / math.sqrt(n)


def queries_needed(sd_diff: float, delta: float, alpha: float = ALPHA, power: float = POWER) -> int | None:
    """How many queries make `delta` the detectable effect (the inverse of detectable_effect,
    rounded up); None when there is nothing to detect."""
    if delta == 0 or sd_diff == 0:
        return None
    return math.ceil((z_sum(alpha, power) * sd_diff / delta) ** 2)


def effect_band(delta: float, base: float) -> str:
    """Size of a change relative to its base: flat (< 1 %), mild, or strong (≥ 5 %)."""
    if base == 0:
        return "flat" if delta == 0 else "strong"
    rel = abs(delta / base)
    return "flat" if rel < FLAT else "strong" if rel >= STRONG else "mild"


def direction(delta: float) -> str:
    return "+" if delta > 0 else "-" if delta < 0 else "="


def _by_task(rows: list[dict], name: str) -> dict:
    out: dict = {}
    for r in rows:
        if r["task_id"] in out:
            raise ValueError(f"{name}: task id {r['task_id']!r} appears more than once")
        out[r["task_id"]] = r
    return out


def _match(named: dict[str, list[dict]]) -> list[tuple[dict, ...]]:
    """Rows of each named run paired by task_id, sorted by it; the runs must cover the same tasks."""
    by = {name: _by_task(rows, name) for name, rows in named.items()}
    every = set().union(*by.values())
    lacking = {name: sorted(every - set(m)) for name, m in by.items() if every - set(m)}
    if lacking:
        detail = "; ".join(f"{name} lacks {ids}" for name, ids in lacking.items())
        raise ValueError(f"runs do not cover the same task ids: {detail}")
    return [tuple(m[t] for m in by.values()) for t in sorted(every)]


def compare_values(a, b) -> dict:
    """Paired per-query values of a base (`a`) and an arm (`b`), in one order: both means, Δ with
    its paired bootstrap interval, band and direction, the spread of the differences, the
    randomization test's p, and how many values rose, fell or stayed."""
    a, b = _paired(a, b)
    base_mean = float(a.mean()) if a.size else 0.0
    arm_mean = float(b.mean()) if b.size else 0.0
    delta = arm_mean - base_mean
    ci = paired_bootstrap_delta(a, b)
    return {
        "n": int(a.size),
        "base": base_mean,
        "arm": arm_mean,
        "delta_abs": delta,
        "delta_rel": delta / base_mean if base_mean else None,
        "band": effect_band(delta, base_mean),
        "direction": direction(delta),
        "ci_low": ci["ci_low"],
        "ci_high": ci["ci_high"],
        "sd_diff": float(np.std(b - a, ddof=1)) if a.size > 1 else 0.0,
        "p_randomization": randomization_test(a, b),
        "improved": int(np.sum(b > a)),
        "regressed": int(np.sum(b < a)),
        "unchanged": int(np.sum(b == a)),
    }


def compare_arm(base_rows: list[dict], arm_rows: list[dict], metric: str = "mrr") -> dict:
    """Everything a table row needs to say whether the arm beat the base on `metric`:
    `compare_values` of the rows paired by task id, and exact McNemar on their hits at 1."""
    pairs = _match({"base": base_rows, "arm": arm_rows})
    base = [p[0] for p in pairs]
    arm = [p[1] for p in pairs]
    mc_b, mc_c = mcnemar_counts(metrics.per_query(base, "acc@1") > 0, metrics.per_query(arm, "acc@1") > 0)
    return {"metric": metric, **compare_values(metrics.per_query(base, metric), metrics.per_query(arm, metric)),
            "mcnemar_b": mc_b, "mcnemar_c": mc_c, "p_mcnemar": mcnemar_exact(mc_b, mc_c)}


def _rank_key(rank: int | None) -> float:
    """A miss sorts after every rank."""
    return math.inf if rank is None else rank


def _rank_label(rank: int | None) -> str:
    return "miss" if rank is None else str(rank)


def decompose(base_rows: list[dict], arm_rows: list[dict]) -> dict:
    """Queries whose first relevant rank got better, worse, or stayed, each with its transition."""
    out: dict[str, list[dict]] = {"improved": [], "regressed": [], "unchanged": []}
    for base, arm in _match({"base": base_rows, "arm": arm_rows}):
        before, after = _rank_key(base["rank"]), _rank_key(arm["rank"])
        bucket = "improved" if after < before else "regressed" if after > before else "unchanged"
        out[bucket].append({
            "task_id": base["task_id"],
            "query": base.get("query"),
            "query_type": base["query_type"],
            "base_rank": base["rank"],
            "arm_rank": arm["rank"],
            "transition": f"{_rank_label(base['rank'])}→{_rank_label(arm['rank'])}",
        })
    return out


# Each category is a predicate over (lexical, semantic, hybrid) first-relevant ranks, a miss being inf.
HYBRID_CATEGORIES = {
    "semantic_demoted": lambda lex, sem, hyb: sem < hyb,
    "rescued": lambda lex, sem, hyb: lex == math.inf and hyb < math.inf,
    "improved_over_lexical": lambda lex, sem, hyb: hyb < lex < math.inf,
    "lexical_demoted": lambda lex, sem, hyb: lex < hyb,
    "missing": lambda lex, sem, hyb: lex == sem == hyb == math.inf,
    # All-miss queries are `missing`, not `identical`: identical means the fusion kept a found rank.
    "identical": lambda lex, sem, hyb: lex == sem == hyb < math.inf,
}


def hybrid_diagnostics(rows_by_method: dict[str, list[dict]]) -> dict:
    """How hybrid fusion moved each query relative to its lexical and semantic inputs.

    Returns {} unless the run holds lexical, semantic and hybrid rows.
    """
    methods = ("lexical", "semantic", "hybrid")
    if not all(m in rows_by_method for m in methods):
        return {}
    out: dict = {name: {"count": 0, "task_ids": []} for name in HYBRID_CATEGORIES}
    for rows in _match({m: rows_by_method[m] for m in methods}):
        ranks = [_rank_key(r["rank"]) for r in rows]
        for name, holds in HYBRID_CATEGORIES.items():
            if holds(*ranks):
                out[name]["count"] += 1
                out[name]["task_ids"].append(rows[0]["task_id"])
    return out
