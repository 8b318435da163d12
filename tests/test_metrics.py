import math

import numpy as np
import pytest

from crmatrix.evaluation import metrics


def row(rank, qt="natural_language", relevant_ranks=None, n_relevant=1):
    return {"rank": rank, "query_type": qt,
            "relevant_ranks": relevant_ranks if relevant_ranks is not None else ([rank] if rank else []),
            "n_relevant": n_relevant}


def test_metric_keys_are_fixed_and_ordered():
    assert list(metrics.METRICS) == ["mrr", "mrr@10", "acc@1", "acc@3", "acc@5", "precision@1", "recall@5", "recall@10",
                                     "recall@100", "ndcg@10", "map", "map@10", "coverage"]


def test_summary_on_hand_computed_ranks():
    rows = [row(1), row(2), row(4), row(None), row(3, "identifier", [3, 12], 2)]
    m = metrics.summarize(rows)
    assert m["n"] == 5
    assert m["mrr"] == pytest.approx((1 + 1 / 2 + 1 / 4 + 0 + 1 / 3) / 5)
    assert m["mrr@10"] == pytest.approx(m["mrr"])
    assert m["acc@1"] == pytest.approx(1 / 5)
    assert m["precision@1"] == pytest.approx(1 / 5)
    assert m["acc@3"] == pytest.approx(3 / 5)
    assert m["acc@5"] == pytest.approx(4 / 5)
    assert m["recall@10"] == pytest.approx((1 + 1 + 1 + 0 + 0.5) / 5)
    assert m["recall@100"] == pytest.approx((1 + 1 + 1 + 0 + 1) / 5)
    assert m["coverage"] == pytest.approx(4 / 5)
    # AP of the two-relevant query: (1/3 + 2/12) / 2; map@10 keeps only rank 3 but still divides by 2.
    assert m["map"] == pytest.approx((1 + 1 / 2 + 1 / 4 + 0 + (1 / 3 + 2 / 12) / 2) / 5)
    assert m["map@10"] == pytest.approx((1 + 1 / 2 + 1 / 4 + 0 + (1 / 3) / 2) / 5)
    ideal2 = 1 + 1 / math.log2(3)
    assert m["ndcg@10"] == pytest.approx((1 + 1 / math.log2(3) + 1 / math.log2(5) + 0 + (1 / 2) / ideal2) / 5)
    by = metrics.by_query_type(rows)
    assert list(by) == ["identifier", "natural_language"]
    assert by["identifier"]["mrr"] == pytest.approx(1 / 3) and by["natural_language"]["n"] == 4


def test_each_metric_on_one_row():
    r = row(2, relevant_ranks=[2, 5, 11, 150], n_relevant=5)
    values = {name: f(r) for name, f in metrics.METRICS.items()}
    ap_full = (1 / 2 + 2 / 5 + 3 / 11 + 4 / 150) / 5
    dcg = 1 / math.log2(3) + 1 / math.log2(6)
    idcg = sum(1 / math.log2(i + 1) for i in range(1, 6))
    assert values == pytest.approx({
        "mrr": 0.5, "mrr@10": 0.5, "acc@1": 0.0, "acc@3": 1.0, "acc@5": 1.0, "precision@1": 0.0,
        "recall@5": 2 / 5, "recall@10": 2 / 5, "recall@100": 3 / 5, "ndcg@10": dcg / idcg, "map": ap_full,
        "map@10": (1 / 2 + 2 / 5) / 5, "coverage": 1.0,
    })


def test_cutoffs_exclude_late_hits():
    r = row(12, relevant_ranks=[12], n_relevant=1)
    assert metrics.METRICS["mrr"](r) == pytest.approx(1 / 12)
    for name in ("mrr@10", "acc@5", "recall@10", "ndcg@10", "map@10"):
        assert metrics.METRICS[name](r) == 0.0
    assert metrics.METRICS["coverage"](r) == 1.0 and metrics.METRICS["recall@100"](r) == 1.0


def test_ndcg_ideal_is_capped_at_k():
    r = row(1, relevant_ranks=list(range(1, 11)), n_relevant=30)
    assert metrics.METRICS["ndcg@10"](r) == pytest.approx(1.0)
    assert metrics.METRICS["recall@10"](r) == pytest.approx(10 / 30)


def test_empty_and_all_missing():
    assert metrics.summarize([]) == {"n": 0, **{k: 0.0 for k in metrics.METRICS}}
    rows = [row(None), row(None, n_relevant=0), row(1, n_relevant=0)]
    assert metrics.summarize(rows) == {"n": 3, **{k: 0.0 for k in metrics.METRICS}}


def test_per_query_keeps_row_order():
    rows = [row(4), row(None), row(1)]
    assert np.array_equal(metrics.per_query(rows, "mrr"), [0.25, 0.0, 1.0])
    assert metrics.per_query([], "map").shape == (0,)


def test_latency_percentiles():
    assert metrics.latency([]) == {"p50": 0.0, "p95": 0.0, "p99": 0.0}
    assert metrics.latency([1, 2, 3, 4, 5]) == {"p50": 3.0, "p95": 4.8, "p99": 4.96}


def test_localization_acc_needs_every_relevant_item_within_k():
    rows = [row(1, relevant_ranks=[1, 4], n_relevant=2),  # both gold files by rank 4
            row(3, relevant_ranks=[3], n_relevant=1),
            row(2, relevant_ranks=[2, 3], n_relevant=3),  # one gold file never ranked
            row(None, n_relevant=2),
            row(1, relevant_ranks=[1], n_relevant=0),  # nothing to find: 0, as every metric
            row(6, relevant_ranks=[6, 10], n_relevant=2)]
    table = {name: [f(r) for r in rows] for name, f in metrics.LOCALIZATION.items()}
    assert table == {"acc_all@1": [0, 0, 0, 0, 0, 0], "acc_all@3": [0, 1, 0, 0, 0, 0],
                     "acc_all@5": [1, 1, 0, 0, 0, 0], "acc_all@10": [1, 1, 0, 0, 0, 1],
                     # LocAgent's: min(n_relevant, k) of them, so the first row's k=1 holds
                     "acc_locagent@1": [1, 0, 0, 0, 0, 0], "acc_locagent@3": [0, 1, 0, 0, 0, 0],
                     "acc_locagent@5": [1, 1, 0, 0, 0, 0], "acc_locagent@10": [1, 1, 0, 0, 0, 1]}
    assert np.array_equal(metrics.per_query(rows, "acc_all@5"), [1, 1, 0, 0, 0, 0])
    assert metrics.summarize(rows, ["acc_all@5", "acc@5"]) == {"n": 6, "acc_all@5": 2 / 6, "acc@5": 3 / 6}
    assert list(metrics.summarize(rows)) == ["n", *metrics.METRICS]  # a run's summary is as it was


def test_locagent_acc_counts_min_of_gold_and_k_where_swerank_counts_every_gold_item():
    # one task of three gold files, ranked 1, 2 and 5 (k = 1, 2, 5)
    three = row(1, relevant_ranks=[1, 2, 5], n_relevant=3)
    assert [metrics.all_at(three, k) for k in (1, 2, 5)] == [0.0, 0.0, 1.0]
    assert [metrics.locagent_at(three, k) for k in (1, 2, 5)] == [1.0, 1.0, 1.0]
    # its first gold file at rank 2: LocAgent's k=1 misses, its k=2 needs both of the first two
    late = row(2, relevant_ranks=[2, 3, 4], n_relevant=3)
    assert [metrics.locagent_at(late, k) for k in (1, 2, 5)] == [0.0, 0.0, 1.0]
    assert [metrics.all_at(late, k) for k in (1, 2, 5)] == [0.0, 0.0, 1.0]
    # a gold file never ranked: SweRank's misses at every k, LocAgent's holds for k < 3
    lost = row(1, relevant_ranks=[1, 2], n_relevant=3)
    assert [metrics.all_at(lost, k) for k in (1, 2, 5)] == [0.0, 0.0, 0.0]
    assert [metrics.locagent_at(lost, k) for k in (1, 2, 5)] == [1.0, 1.0, 0.0]
    # one gold file: the two agree (and with acc@k)
    one = row(4, relevant_ranks=[4], n_relevant=1)
    assert [(metrics.all_at(one, k), metrics.locagent_at(one, k)) for k in (1, 2, 5)] == [(0, 0), (0, 0), (1, 1)]
    assert metrics.locagent_at(row(1, relevant_ranks=[1], n_relevant=0), 1) == 0.0  # nothing to find
    assert metrics.summarize([three, late, lost], ["acc_all@1", "acc_locagent@1"]) == {
        "n": 3, "acc_all@1": 0.0, "acc_locagent@1": 2 / 3}


def test_localization_acc_of_files_ranked_from_symbol_hits_and_of_functions():
    from crmatrix.datasets.relevance import ranked_units
    from crmatrix.hits import Hit

    hits = [Hit("a.py", "f", "function", 1, 5, 0.9), Hit("b.py", "g", "function", 1, 5, 0.8),
            Hit("a.py", "h", "function", 7, 9, 0.7), Hit("c.py", "k", "function", 1, 2, 0.6)]
    files = {"type": "file_set", "file_set": ["a.py", "c.py"]}
    units = ranked_units(files, hits)
    assert units == [("a.py", True), ("b.py", False), ("c.py", True)]  # a file at its first hit
    r = {"relevant_ranks": [i for i, (_, rel) in enumerate(units, 1) if rel], "n_relevant": 2}
    assert [metrics.LOCALIZATION[f"acc_all@{k}"](r) for k in (1, 3)] == [0.0, 1.0]
    functions = {"type": "definitions", "definitions": [["a.py", "h", 7, 9], ["c.py", "k", 1, 2]]}
    r = {"relevant_ranks": [i for i, (_, rel) in enumerate(ranked_units(functions, hits), 1) if rel], "n_relevant": 2}
    assert r["relevant_ranks"] == [3, 4]
    assert [metrics.LOCALIZATION[f"acc_all@{k}"](r) for k in (3, 5)] == [0.0, 1.0]
