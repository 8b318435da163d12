"""Our metrics against ir_measures (pytrec_eval underneath) on random runs full of score ties.

Two traps this guards:
- Queries absent from the run. trec_eval and pytrec_eval score only the queries present in
  the run, so a query that returned nothing vanishes and the mean rises. We score it 0.
  ir_measures 0.4.3 fills such queries with the measure's default (0) itself, so its
  per-query values and aggregate agree with ours; raw pytrec_eval does not.
- Score ties. trec_eval re-sorts a run by score and breaks ties by docid, not by our rule;
  `trec.write_run` writes rank-derived scores so that every tool sees exactly our order.
"""

import numpy as np
import pytest

from crmatrix.evaluation import metrics, trec

ir_measures = pytest.importorskip("ir_measures")
pytrec_eval = pytest.importorskip("pytrec_eval")
from ir_measures import AP, RR, P, R, Success, nDCG  # noqa: E402

OURS = {"mrr": RR, "mrr@10": RR@10, "acc@1": Success@1, "acc@3": Success@3, "acc@5": Success@5,
        "precision@1": P@1, "recall@10": R@10, "recall@100": R@100, "ndcg@10": nDCG@10, "map": AP,
        "map@10": AP@10}


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    rng = np.random.default_rng(7)
    docs = [f"doc{i}" for i in range(50)]  # unpadded, so docid order is not numeric order
    qrels, ranked, scored, rows = {}, {}, {}, []
    for q in range(200):
        qid = f"q{q}"
        relevant = set(rng.choice(docs, size=rng.integers(1, 6), replace=False).tolist())
        n_returned = 0 if rng.random() < 0.1 else int(rng.integers(1, 51))
        returned = rng.choice(docs, size=n_returned, replace=False).tolist()
        scores = rng.integers(0, 4, size=n_returned).tolist()  # four score levels: ties everywhere
        order = [d for _, d in sorted(zip([-s for s in scores], returned, strict=True))]  # score desc, then docid asc
        relevant_ranks = [i for i, d in enumerate(order, 1) if d in relevant]
        qrels[qid], ranked[qid] = sorted(relevant), order
        scored[qid] = dict(zip(returned, map(float, scores), strict=True))
        rows.append({"task_id": qid, "query_type": "nl", "rank": relevant_ranks[0] if relevant_ranks else None,
                     "relevant_ranks": relevant_ranks, "n_relevant": len(relevant), "hits": len(order)})
    tmp = tmp_path_factory.mktemp("trec")
    trec.write_run(tmp / "run.txt", ranked, "crmatrix")
    trec.write_qrels(tmp / "qrels.txt", qrels)
    run = list(ir_measures.read_trec_run(str(tmp / "run.txt")))
    judged = list(ir_measures.read_trec_qrels(str(tmp / "qrels.txt")))
    theirs = {(m.query_id, m.measure): m.value for m in ir_measures.iter_calc(list(OURS.values()), judged, run)}
    return {"rows": rows, "theirs": theirs, "judged": judged, "run": run, "qrels": qrels, "scored": scored}


def _pytrec(qrels: dict, run: dict, measure: str) -> dict:
    judged = {q: {d: 1 for d in docs} for q, docs in qrels.items()}
    return {q: v[measure] for q, v in pytrec_eval.RelevanceEvaluator(judged, {measure}).evaluate(run).items()}


def test_generator_covers_ties_and_empty_runs(bench):
    empty = {r["task_id"] for r in bench["rows"] if r["hits"] == 0}
    assert 5 < len(empty) < 40
    assert not empty & {d.query_id for d in bench["run"]}
    assert sum(len(s) - len(set(s.values())) for s in bench["scored"].values()) > 1000


@pytest.mark.parametrize("name", list(OURS))
def test_per_query_values_match(bench, name):
    ours = metrics.per_query(bench["rows"], name)
    for r, value in zip(bench["rows"], ours, strict=True):
        assert value == pytest.approx(bench["theirs"][(r["task_id"], OURS[name])], abs=1e-9), r["task_id"]


@pytest.mark.parametrize("name", list(OURS))
def test_mean_is_over_every_judged_query(bench, name):
    qids = sorted({q.query_id for q in bench["judged"]})
    assert len(qids) == len(bench["rows"]) == 200
    filled = np.mean([bench["theirs"][(qid, OURS[name])] for qid in qids])
    ours = metrics.summarize(bench["rows"])[name]
    assert ours == pytest.approx(filled, abs=1e-9)
    assert ours == pytest.approx(ir_measures.calc_aggregate([OURS[name]], bench["judged"], bench["run"])[OURS[name]],
                                 abs=1e-9)


def test_pytrec_eval_drops_queries_absent_from_the_run(bench):
    run = {q: {d.doc_id: d.score for d in bench["run"] if d.query_id == q} for q in {d.query_id for d in bench["run"]}}
    rr = _pytrec(bench["qrels"], run, "recip_rank")
    assert len(rr) < len(bench["rows"])
    ours = metrics.per_query(bench["rows"], "mrr")
    assert np.mean(list(rr.values())) > ours.mean()
    assert ours.mean() == pytest.approx(sum(rr.values()) / len(bench["rows"]), abs=1e-9)


def test_raw_tied_scores_would_change_the_order(bench):
    rr = _pytrec(bench["qrels"], {q: s for q, s in bench["scored"].items() if s}, "recip_rank")
    ours = dict(zip((r["task_id"] for r in bench["rows"]), metrics.per_query(bench["rows"], "mrr"), strict=True))
    assert any(abs(rr[q] - ours[q]) > 1e-9 for q in rr)
