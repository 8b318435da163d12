"""The random-effects pool against the textbook case: BCG vaccine trials (Colditz et al. 1994),
log risk ratios, as in metafor's `rma(yi, vi, data=escalc("RR", ...), method="DL")`."""

import math

import pytest

from crmatrix.analysis import meta

# tpos, tneg, cpos, cneg of the 13 trials (metafor's dat.bcg)
BCG = [(4, 119, 11, 128), (6, 300, 29, 274), (3, 228, 11, 209), (62, 13536, 248, 12619),
       (33, 5036, 47, 5761), (180, 1361, 372, 1079), (8, 2537, 10, 619), (505, 87886, 499, 87892),
       (29, 7470, 45, 7232), (17, 1699, 65, 1600), (186, 50448, 141, 27197), (5, 2493, 3, 2338),
       (27, 16886, 29, 17825)]


def log_rr(a, b, c, d):
    return math.log((a / (a + b)) / (c / (c + d))), 1 / a - 1 / (a + b) + 1 / c - 1 / (c + d)


def test_dersimonian_laird_on_the_bcg_trials():
    y, v = zip(*(log_rr(*t) for t in BCG), strict=True)
    r = meta.random_effects(y, v)
    # metafor prints: estimate -0.7141, se 0.1787, ci -1.0644 .. -0.3638, tau^2 0.3088,
    # Q(df = 12) = 152.2330, I^2 92.12%
    assert r["k"] == 13 and r["df"] == 12
    assert r["estimate"] == pytest.approx(-0.7141, abs=5e-5)
    assert r["se"] == pytest.approx(0.1787, abs=5e-5)
    assert (r["ci_low"], r["ci_high"]) == (pytest.approx(-1.0644, abs=5e-5), pytest.approx(-0.3638, abs=5e-5))
    assert r["tau2"] == pytest.approx(0.3088, abs=5e-5)
    assert r["q"] == pytest.approx(152.2330, abs=5e-5)
    assert r["i2"] == pytest.approx(0.9212, abs=5e-5)
    assert sum(r["weights"]) == pytest.approx(1.0)


def test_two_studies_by_hand():
    # w = 1/0.01, 1/0.04 = 100, 25; fixed = (100*0.1 + 25*0.4)/125 = 0.16;
    # Q = 100*0.06^2 + 25*0.24^2 = 1.8; C = 125 - (100^2 + 25^2)/125 = 40; tau2 = (1.8 - 1)/40 = 0.02
    r = meta.random_effects([0.1, 0.4], [0.01, 0.04])
    assert r["q"] == pytest.approx(1.8) and r["tau2"] == pytest.approx(0.02)
    # w* = 1/0.03, 1/0.06; estimate = (0.1/0.03 + 0.4/0.06) / (1/0.03 + 1/0.06) = 0.2, se = sqrt(1/50)
    assert r["estimate"] == pytest.approx(0.2) and r["se"] == pytest.approx(math.sqrt(0.02))
    assert r["i2"] == pytest.approx(0.8 / 1.8)
    assert r["weights"] == pytest.approx([2 / 3, 1 / 3])


def test_homogeneous_studies_have_no_tau_and_one_study_no_i2():
    r = meta.random_effects([0.2, 0.2, 0.2], [0.01, 0.02, 0.04])
    assert (r["tau2"], r["q"], r["i2"]) == (0.0, pytest.approx(0.0), 0.0)
    one = meta.random_effects([0.3], [0.04])
    assert (one["estimate"], one["se"], one["tau2"], one["i2"]) == (0.3, 0.2, 0.0, None)
    assert (one["ci_low"], one["ci_high"]) == (pytest.approx(0.3 - 1.959964 * 0.2), pytest.approx(0.3 + 1.959964 * 0.2))


def test_rejects_what_cannot_be_weighed():
    with pytest.raises(ValueError, match="positive"):
        meta.random_effects([0.1, 0.2], [0.01, 0.0])
    with pytest.raises(ValueError, match="2 effects and 1 variances"):
        meta.random_effects([0.1, 0.2], [0.01])
