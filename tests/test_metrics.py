import pytest

from crmatrix import metrics


def row(rank, qt="natural_language", relevant_ranks=None, n_relevant=1):
    return {"rank": rank, "query_type": qt,
            "relevant_ranks": relevant_ranks if relevant_ranks is not None else ([rank] if rank else []),
            "n_relevant": n_relevant}


def test_summary_on_hand_computed_ranks():
    rows = [row(1), row(2), row(4), row(None), row(3, "identifier", [3, 12], 2)]
    m = metrics.summarize(rows)
    assert m["n"] == 5
    assert m["mrr"] == pytest.approx((1 + 1 / 2 + 1 / 4 + 0 + 1 / 3) / 5)
    assert m["acc@1"] == pytest.approx(1 / 5)
    assert m["acc@3"] == pytest.approx(3 / 5)
    assert m["acc@5"] == pytest.approx(4 / 5)
    assert m["recall@10"] == pytest.approx((1 + 1 + 1 + 0 + 0.5) / 5)
    by = metrics.by_query_type(rows)
    assert list(by) == ["identifier", "natural_language"]
    assert by["identifier"]["mrr"] == pytest.approx(1 / 3) and by["natural_language"]["n"] == 4


def test_empty_and_all_missing():
    assert metrics.summarize([]) == {"n": 0, "mrr": 0.0, "acc@1": 0.0, "acc@3": 0.0, "acc@5": 0.0, "recall@10": 0.0}
    assert metrics.summarize([row(None), row(None, n_relevant=0)])["mrr"] == 0.0


def test_latency_percentiles():
    assert metrics.latency([]) == {"p50": 0.0, "p95": 0.0, "p99": 0.0}
    assert metrics.latency([1, 2, 3, 4, 5]) == {"p50": 3.0, "p95": 4.8, "p99": 4.96}
