import json
import math
import os

import fixture_runs
import numpy as np
import pytest

from crmatrix import CrmatrixError
from crmatrix.analysis import check, stats
from crmatrix.evaluation import tokens


def row(task_id, rank, qt="nl", n_relevant=1):
    return {"task_id": task_id, "query": f"query {task_id}", "query_type": qt, "rank": rank,
            "relevant_ranks": [rank] if rank else [], "n_relevant": n_relevant, "hits": 10}


# --- bootstrap -------------------------------------------------------------------------------

def test_bootstrap_of_a_constant_and_of_nothing():
    assert stats.bootstrap_ci([0.1] * 7) == (0.1, 0.1)
    assert stats.bootstrap_ci([]) == (0.0, 0.0)


def test_bootstrap_two_values_matches_the_same_draw():
    idx = np.random.default_rng(0).integers(0, 2, size=(1000, 2))
    means = np.array([0.0, 1.0])[idx].mean(axis=1)
    assert set(means) == {0.0, 0.5, 1.0}
    expected = tuple(np.percentile(means, [2.5, 97.5]))
    assert stats.bootstrap_ci([0, 1]) == expected == (0.0, 1.0)
    assert stats.bootstrap_ci([0, 1], level=0.5) == tuple(np.percentile(means, [25, 75]))


def test_bootstrap_is_the_percentile_interval_of_the_seeded_draw():
    v = np.array([1, 0.5, 0, 0, 1 / 3, 1, 0.25, 0, 1, 0.2])
    means = v[np.random.default_rng(0).integers(0, v.size, size=(1000, v.size))].mean(axis=1)
    # scipy places the 2.5 % quantile at (1 - 0.95) / 2, np.percentile at 2.5 / 100: the
    # same point but for the last bit of its position
    assert stats.bootstrap_ci(v) == pytest.approx(tuple(np.percentile(means, [2.5, 97.5])), rel=1e-15, abs=0)


def test_bootstrap_is_deterministic_and_seeded():
    v = np.random.default_rng(3).random(50)
    assert stats.bootstrap_ci(v) == stats.bootstrap_ci(v)
    assert stats.bootstrap_ci(v, seed=1) != stats.bootstrap_ci(v)
    low, high = stats.bootstrap_ci(v)
    assert low < v.mean() < high


# stats draws scipy.stats's numbers without importing scipy.stats (a cell_stats job would spend
# most of its second on that import): the same bits, held to scipy.stats here.
@pytest.mark.parametrize("seed", range(40))
def test_bootstrap_is_scipy_stats_bootstrap_bit_for_bit(seed):
    from scipy.stats import bootstrap

    gen = np.random.default_rng(seed)
    n = int(gen.integers(2, 400))
    # ranks' reciprocals, hits and continuous values, as the metrics give them
    v = [1 / gen.integers(1, 12, n), gen.integers(0, 2, n).astype(float), gen.random(n)][seed % 3]
    for level in (0.95, 0.9, 0.5):
        ci = bootstrap((v,), np.mean, n_resamples=1000, confidence_level=level, method="percentile",
                       vectorized=True, rng=np.random.default_rng(0)).confidence_interval
        assert stats.bootstrap_ci(v, level=level) == (float(ci.low), float(ci.high))


def test_mcnemar_is_the_exact_tail_correctly_rounded_and_z_is_scipy_stats_bit_for_bit():
    from fractions import Fraction

    from scipy.stats import binom, norm

    assert stats.mcnemar_exact(0, 0) == 1.0 and stats.mcnemar_exact(3, 3) == 1.0
    assert stats.mcnemar_exact(0, 5) == 2 / 32 and stats.mcnemar_exact(1, 9) == 22 / 1024
    for n in range(1, 400):
        tail = 0  # how many of the 2**n coin sequences have at most k heads
        scipy_tails = binom.cdf(range(n // 2 + 1), n, 0.5)
        for k in range(n // 2 + 1):
            tail += math.comb(n, k)
            exact = min(Fraction(1), 2 * Fraction(tail, 2**n))
            assert stats.mcnemar_exact(k, n - k) == float(exact) == stats.mcnemar_exact(n - k, k)
            assert stats.mcnemar_exact(k, n - k) == pytest.approx(float(min(1.0, 2 * scipy_tails[k])), rel=1e-13)
    for alpha in (0.05, 0.05 / 2, 0.05 / 3, 0.05 / 7, 0.01, 0.1):
        for power in (0.8, 0.9, 0.5):
            assert stats.z_sum(alpha, power) == float(norm.ppf(1 - alpha / 2) + norm.ppf(power))


def test_paired_bootstrap_delta():
    a = np.array([0.0, 0.5, 1.0, 0.25])
    d = stats.paired_bootstrap_delta(a, a + 0.25)
    assert d == {"delta": pytest.approx(0.25), "ci_low": 0.25, "ci_high": 0.25}
    b = np.array([1.0, 0.5, 0.0, 1.0])
    d = stats.paired_bootstrap_delta(a, b)
    assert d["delta"] == pytest.approx(b.mean() - a.mean())
    assert (d["ci_low"], d["ci_high"]) == stats.bootstrap_ci(b - a)
    with pytest.raises(ValueError, match="length"):
        stats.paired_bootstrap_delta([1, 2], [1])


# --- tests -----------------------------------------------------------------------------------

def test_randomization_exact():
    assert stats.randomization_test([0, 0, 0], [1, 1, 1]) == 0.25
    assert stats.randomization_test([1, 0, 1], [1, 0, 1]) == 1.0
    # zeros do not add sign assignments: same p as [1, 1, 1]
    assert stats.randomization_test([0, 0, 0, 0.5], [1, 1, 1, 0.5]) == 0.25
    # diffs [1, -1]: every assignment has |mean| >= 0
    assert stats.randomization_test([0, 1], [1, 0]) == 1.0


def test_randomization_monte_carlo_is_deterministic():
    rng = np.random.default_rng(5)
    a, b = rng.random(40), rng.random(40) + 0.3
    p = stats.randomization_test(a, b, n_permutations=2000)
    assert p == stats.randomization_test(a, b, n_permutations=2000)
    assert p == 1 / 2001  # a shift this large is never reached by chance
    same = rng.random(40)
    assert stats.randomization_test(same, same[::-1], n_permutations=2000) > 0.05


def test_the_fewest_queries_the_paired_test_can_judge_is_derived_from_the_test():
    """On n queries the sign-flip test's smallest p is 2 / 2^n (every difference one way): 0.0625
    on 5, 0.03125 on 6, so at α 0.05 no outcome on 5 or fewer is significant. Exact McNemar's
    smallest on n discordant pairs is the same."""
    assert stats.MIN_QUERIES == stats.fewest_testable(0.05) == 6
    assert (stats.fewest_testable(0.01), stats.fewest_testable(0.1)) == (8, 5)
    rng = np.random.default_rng(3)
    for n in range(1, 9):
        best = stats.randomization_test(np.zeros(n), rng.random(n) + 0.1)  # every difference one way
        assert best == 2 / 2**n == stats.mcnemar_exact(0, n)
        assert (best < stats.ALPHA) == (n >= stats.MIN_QUERIES)


def test_mcnemar():
    assert stats.mcnemar_exact(1, 6) == pytest.approx(0.125)
    assert stats.mcnemar_exact(0, 5) == pytest.approx(0.0625)
    assert stats.mcnemar_exact(3, 3) == 1.0
    assert stats.mcnemar_exact(0, 0) == 1.0
    assert stats.mcnemar_counts([True, True, False, False, True], [False, True, True, True, True]) == (1, 2)


def test_holm():
    assert stats.holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert stats.holm([0.5, 0.6]) == [1.0, 1.0]
    assert stats.holm([]) == []


def test_effect_bands_at_boundaries():
    assert stats.effect_band(0.0099, 1.0) == "flat"
    assert stats.effect_band(0.01, 1.0) == "mild"
    assert stats.effect_band(-0.0499, 1.0) == "mild"
    assert stats.effect_band(0.05, 1.0) == "strong"
    assert stats.effect_band(-0.025, 0.5) == "strong"
    assert stats.effect_band(0.0, 0.0) == "flat"
    assert stats.effect_band(0.1, 0.0) == "strong"
    assert [stats.direction(x) for x in (0.1, -0.1, 0.0)] == ["+", "-", "="]


# --- comparisons -----------------------------------------------------------------------------

def test_compare_arm():
    base = [row("t1", 1), row("t2", 3), row("t3", None), row("t4", 2)]
    arm = [row("t4", 2), row("t3", 1), row("t2", 1), row("t1", 1)]  # order does not matter
    c = stats.compare_arm(base, arm)
    assert set(c) == {"metric", "n", "base", "arm", "delta_abs", "delta_rel", "band", "direction", "ci_low",
                      "ci_high", "sd_diff", "p_randomization", "mcnemar_b", "mcnemar_c", "p_mcnemar", "improved",
                      "regressed", "unchanged"}
    assert c["base"] == pytest.approx((1 + 1 / 3 + 0 + 1 / 2) / 4) and c["arm"] == pytest.approx(3.5 / 4)
    assert c["delta_abs"] == pytest.approx(c["arm"] - c["base"])
    assert c["delta_rel"] == pytest.approx(c["delta_abs"] / c["base"])
    assert (c["band"], c["direction"]) == ("strong", "+")
    assert c["ci_low"] <= c["delta_abs"] <= c["ci_high"]
    # diffs 0, 2/3, 1, 0: sample sd about their mean 5/12
    assert c["sd_diff"] == pytest.approx(math.sqrt(((5 / 12) ** 2 * 2 + (2 / 3 - 5 / 12) ** 2 + (7 / 12) ** 2) / 3))
    assert c["p_randomization"] == 0.5  # two positive diffs: only (+,+) and (−,−) reach the observed |mean|
    assert (c["mcnemar_b"], c["mcnemar_c"], c["p_mcnemar"]) == (0, 2, 0.5)
    assert (c["improved"], c["regressed"], c["unchanged"]) == (2, 0, 2)
    json.dumps(c)  # plain Python types only
    assert stats.compare_arm(base, arm) == c
    zero = stats.compare_arm([row("t1", None)], [row("t1", None)])
    assert (zero["delta_rel"], zero["band"], zero["direction"]) == (None, "flat", "=")


def test_compare_arm_rejects_different_tasks():
    with pytest.raises(ValueError, match=r"arm lacks \['t2'\].*base lacks \['t9'\]|base lacks \['t9'\].*arm lacks"):
        stats.compare_arm([row("t1", 1), row("t2", 1)], [row("t1", 1), row("t9", 1)])


def test_decompose_transitions():
    base = [row("b", 4), row("a", 1), row("c", None), row("d", 2), row("e", None)]
    arm = [row("a", 3), row("b", None), row("c", 2), row("d", 2), row("e", None)]
    d = stats.decompose(base, arm)
    assert [(x["task_id"], x["transition"]) for x in d["improved"]] == [("c", "miss→2")]
    assert [(x["task_id"], x["transition"]) for x in d["regressed"]] == [("a", "1→3"), ("b", "4→miss")]
    assert [(x["task_id"], x["transition"]) for x in d["unchanged"]] == [("d", "2→2"), ("e", "miss→miss")]
    assert d["improved"][0] == {"task_id": "c", "query": "query c", "query_type": "nl", "base_rank": None,
                                "arm_rank": 2, "transition": "miss→2"}


def test_hybrid_diagnostics():
    ranks = {  # task: (lexical, semantic, hybrid)
        "t1": (None, 1, 2),     # rescued, semantic demoted
        "t2": (3, None, 1),     # improved over lexical
        "t3": (1, 5, None),     # lexical and semantic demoted
        "t4": (None, None, None),  # missing
        "t5": (2, 2, 2),        # identical
    }
    by = {m: [row(t, r[i]) for t, r in ranks.items()] for i, m in enumerate(("lexical", "semantic", "hybrid"))}
    d = stats.hybrid_diagnostics(by)
    assert {k: v["task_ids"] for k, v in d.items()} == {
        "semantic_demoted": ["t1", "t3"], "rescued": ["t1"], "improved_over_lexical": ["t2"],
        "lexical_demoted": ["t3"], "missing": ["t4"], "identical": ["t5"]}
    assert all(v["count"] == len(v["task_ids"]) for v in d.values())
    assert stats.hybrid_diagnostics({"lexical": by["lexical"], "hybrid": by["hybrid"]}) == {}


# --- gates -----------------------------------------------------------------------------------

def gated(methods: dict):
    return fixture_runs.typed(fixture_runs.gated(methods))


RUN = gated({
    "hybrid": {"metrics": {"mrr": 0.412, "acc@1": 0.3}, "latency_ms": {"p50": 20.0, "p95": 312.5, "p99": 400.0},
               "by_query_type": {"natural_language": {"mrr": 0.5, "acc@1": 0.45}}},
    "lexical": {"metrics": {"mrr": 0.6, "acc@1": 0.5}, "latency_ms": {"p50": 1.0, "p95": 2.0, "p99": 3.0},
                "by_query_type": {"natural_language": {"mrr": 0.3, "acc@1": 0.35}}},
})


def test_gates_pass_and_fail():
    assert check.check(RUN, check.parse_gates(["lexical.mrr=0.5", "hybrid.natural_language.acc@1=0.4"],
                                              ["lexical.latency_p95_ms=250"])) == []
    failures = check.check(RUN, check.parse_gates(
        ["hybrid.mrr=0.5", "lexical.natural_language.acc@1=0.4", "hybrid.ndcg@10=1", "bm25.mrr=0.1",
         "hybrid.identifier.mrr=0.1"],
        ["hybrid.latency_p95_ms=250"]))
    assert failures == [
        "hybrid.mrr = 0.412 < min 0.5",
        "lexical.natural_language.acc@1 = 0.35 < min 0.4",
        "hybrid.ndcg@10: not in the run (metrics: acc@1, mrr)",
        "bm25.mrr: not in the run (methods: hybrid, lexical)",
        "hybrid.identifier.mrr: not in the run (query types: natural_language)",
        "hybrid.latency_p95_ms = 312.5 > max 250",
    ]
    # a metric no run has is no failed gate but a misspelled one (crmatrix check exits 2)
    with pytest.raises(CrmatrixError, match=r"^min gate 'hybrid.nope=1': unknown metric 'nope' \(expected one of: n, "):
        check.parse_gates(["hybrid.nope=1"], [])


def test_gate_shows_a_value_that_only_rounds_to_the_bound():
    assert check.check(gated({"m": {"metrics": {"mrr": 0.49999999}}}),
                       check.parse_gates(["m.mrr=0.5"], [])) == ["m.mrr = 0.49999999 < min 0.5"]


@pytest.mark.parametrize("bad", ["hybrid.mrr", "hybrid=0.5", "hybrid.mrr=high", "a.b.c.d=1", ".mrr=1"])
def test_bad_gate_syntax(bad):
    with pytest.raises(CrmatrixError, match=r"METHOD\.METRIC=NUMBER") as e:
        check.parse_gates([bad], [])
    assert repr(bad) in str(e.value)


# --- tokens ----------------------------------------------------------------------------------

def test_count_tokens_offline(tmp_path, monkeypatch):
    monkeypatch.setenv("CRMATRIX_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")  # restored after the test; empty counts as unset
    target = tokens.install_cl100k()
    assert target == tmp_path / "tiktoken" / "9b5ad71b2ce5302211f9c61530b329a4922fc6a4"
    assert os.environ["TIKTOKEN_CACHE_DIR"] == str(target.parent)
    assert tokens.atomic.sha256_file(target) == tokens.SHA256
    assert tokens.count_tokens("hello world") == 2
    assert tokens.count_tokens("<|endoftext|>") > 1  # special tokens are plain text here


# --- power -----------------------------------------------------------------------------------

def test_detectable_effect_and_queries_needed():
    # z(0.975) + z(0.8) = 1.959964 + 0.841621 = 2.801585: sd 0.5 over 25 queries detects 0.2802
    assert stats.detectable_effect(0.5, 25) == pytest.approx(2.8015852181 * 0.5 / 5, abs=1e-10)
    # at alpha 0.05/4 the first quantile is z(0.99375) = 2.497705
    assert stats.detectable_effect(0.5, 25, alpha=0.0125) == pytest.approx((2.4977054 + 0.8416212) * 0.1, abs=1e-7)
    assert stats.detectable_effect(0.5, 0) is None
    # the inverse: (2.801585 * 0.5 / 0.1)^2 = 196.2 -> 197 queries find a Δ of 0.1
    assert stats.queries_needed(0.5, 0.1) == 197
    assert stats.queries_needed(0.5, -0.1) == 197
    assert stats.detectable_effect(0.5, 197) <= 0.1 < stats.detectable_effect(0.5, 196)
    assert stats.queries_needed(0.0, 0.1) is None and stats.queries_needed(0.5, 0.0) is None


CELL_JOB = """
import json, sys
sys.path.insert(0, sys.argv[1])
import fixture_runs
from pathlib import Path
from crmatrix.stages import cell_stats
ranks = fixture_runs.RANKS["gamma"][1]
for arm in ("baseline", "stacked"):
    fixture_runs.write(Path(sys.argv[2]) / f"{arm}.json", fixture_runs.run("gamma", arm, ranks[arm], "rust"))
cell = cell_stats.run(Path(sys.argv[2]) / "stacked.json", Path(sys.argv[2]) / "baseline.json", "hybrid", None,
                      Path(sys.argv[2]) / "cell.json")
print(json.dumps({"scipy": sorted(m for m in sys.modules if m.split(".")[0] == "scipy"),
                  "p_mcnemar": cell.cell.compared.p_mcnemar}))
"""


def test_a_cell_stats_job_imports_no_scipy(tmp_path):
    """A cell's statistics are numpy and integers: scipy's import would be a sixth of a second
    of every cell_stats job (an added arm has one per dataset and system)."""
    import subprocess
    import sys
    from pathlib import Path

    proc = subprocess.run([sys.executable, "-c", CELL_JOB, str(Path(__file__).parent), str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    # gamma: stacked puts 5 more queries at rank 1 (7 against 2) and loses none: McNemar b=0, c=5, p=2/2**5
    assert json.loads(proc.stdout) == {"scipy": [], "p_mcnemar": 0.0625}
