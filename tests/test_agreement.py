"""Rank agreement (crmatrix.analysis.agreement): Kendall's tau-b and Spearman's rho on hand-made
orders, exact; the bootstrap's resamples, its undefined draws, and configurations merged."""

import math

import numpy as np
import pytest
from scipy import stats as scipy_stats

from crmatrix.analysis.agreement import agreement, average_ranks, collapse_identical, kendall_tau, spearman_rho


@pytest.mark.parametrize(("x", "y", "tau", "rho"), [
    ([1, 2, 3, 4], [1, 2, 3, 4], 1.0, 1.0),
    ([1, 2, 3, 4], [4, 3, 2, 1], -1.0, -1.0),
    # one discordant pair of six: (5 - 1) / 6; sum d^2 = 2: 1 - 6 * 2 / (4 * 15)
    ([1, 2, 3, 4], [1, 3, 2, 4], 2 / 3, 0.8),
    # a tie in x: 5 concordant pairs over sqrt(5 untied in x * 6 in y); ranks 1.5 1.5 3 4 against 1 2 3 4
    ([0.1, 0.1, 0.2, 0.3], [1, 2, 3, 4], 5 / math.sqrt(30), 3 / math.sqrt(10)),
])
def test_coefficients_on_hand_made_orders(x, y, tau, rho):
    assert float(kendall_tau(x, y)) == pytest.approx(tau, abs=1e-15)
    assert float(spearman_rho(x, y)) == pytest.approx(rho, abs=1e-15)


def test_average_ranks_share_ties():
    assert average_ranks([0.3, 0.1, 0.3, 0.2]).tolist() == [3.5, 1.0, 3.5, 2.0]


def test_coefficients_match_scipy_with_ties_and_in_a_batch():
    rng = np.random.default_rng(3)
    x = rng.integers(0, 4, (5, 9)).astype(float)
    y = rng.integers(0, 4, (5, 9)).astype(float)
    taus, rhos = kendall_tau(x, y), spearman_rho(x, y)
    for i in range(5):
        assert taus[i] == pytest.approx(scipy_stats.kendalltau(x[i], y[i]).statistic, abs=1e-12)
        assert rhos[i] == pytest.approx(scipy_stats.spearmanr(x[i], y[i]).statistic, abs=1e-12)


def test_a_constant_order_has_no_coefficient():
    assert math.isnan(kendall_tau([1, 1, 1], [1, 2, 3]))
    assert math.isnan(spearman_rho([1, 2, 3], [2, 2, 2]))


def test_collapse_keeps_the_first_of_configurations_equal_in_both_sets():
    a = np.array([[1, 0], [1, 0], [0, 1], [1, 0]], dtype=float)
    b = np.array([[1], [1], [0], [0]], dtype=float)  # the fourth equals the first on a only
    kept, merged = collapse_identical(["x", "y", "z", "w"], a, b)
    assert kept == [0, 2, 3]
    assert merged == {"x": ["y"]}


def test_bootstrap_resamples_each_set_and_counts_undefined_draws():
    # two configurations, two tasks in a: a resample drawing both tasks alike orders them (tau
    # +1 or -1 against b's fixed order); one drawing each once ties them: undefined
    a = np.array([[1, 0], [0, 1]], dtype=float)
    b = np.array([[1, 1, 1], [0, 0, 0]], dtype=float)
    ia = np.random.default_rng(0).integers(0, 2, (200, 2))
    mixed = int((ia[:, 0] != ia[:, 1]).sum())
    tau, rho = agreement(a, b, n_resamples=200, seed=0)
    assert (tau.name, rho.name) == ("kendall_tau", "spearman_rho")
    assert tau.value is None and rho.value is None  # the tasks as they are tie the two in a
    assert tau.undefined == rho.undefined == mixed
    assert 0 < mixed < 200
    assert (tau.ci_low, tau.ci_high) == (-1.0, 1.0)
    # b's order is the same in every resample: resampling a alone draws the same; b alone, a's tie
    assert agreement(a, b, n_resamples=200, seed=0, resample=("a",)) == [tau, rho]
    alone = agreement(a, b, n_resamples=200, seed=0, resample=("b",))[0]
    assert (alone.value, alone.ci_low, alone.ci_high, alone.undefined) == (None, None, None, 200)


def test_bootstrap_point_and_interval_of_a_clear_agreement():
    a = np.array([[0.9, 0.8, 1.0], [0.5, 0.4, 0.6], [0.1, 0.0, 0.2]])
    b = np.array([[0.7, 0.9], [0.3, 0.5], [0.0, 0.1]])
    tau, rho = agreement(a, b, n_resamples=50, seed=0)
    assert (tau.value, tau.ci_low, tau.ci_high, tau.undefined) == (1.0, 1.0, 1.0, 0)
    assert (rho.value, rho.ci_low, rho.ci_high, rho.undefined) == (1.0, 1.0, 1.0, 0)
    assert agreement(a, b[::-1], n_resamples=50, seed=0)[0].value == -1.0


def test_bootstrap_refuses_mismatched_configurations():
    with pytest.raises(ValueError, match=r"shapes \(2, 3\) and \(3, 1\)"):
        agreement(np.zeros((2, 3)), np.zeros((3, 1)))
    with pytest.raises(ValueError, match="resample names the sets"):
        agreement(np.zeros((2, 3)), np.zeros((2, 1)), resample=("c",))
