"""The structural split and the call-graph edge format, on hand-made symbols and graphs."""

import json

import numpy as np
import pytest

from crmatrix import CrmatrixError
from crmatrix.datasets import registry, relevance, splits
from crmatrix.datasets.tasks import Task
from crmatrix.engine import Engine, knobs
from crmatrix.evaluation import callgraph
from crmatrix.graph import Graph
from crmatrix.symbols import Symbol, symbols_hash
from crmatrix.systems.registry import System

NAMES = ["alpha", "beta", "gamma", "delta", "omega"]
SYMS = [Symbol(n, "function", "", f"src/{n}.py", "python", 1, 3, f"def {n}()", "", "") for n in NAMES]
# cosines with the query [1, 0]: alpha 1.0, gamma 0.8, beta 0.6, delta 0.0, omega -1.0
VECS = np.array([[1, 0], [0.6, 0.8], [0.8, 0.6], [0, 1], [-1, 0]], dtype=np.float32)


def ids(*names):
    return [f"src/{n}.py:1:{n}" for n in names]


def dense():
    return Engine(SYMS, knobs.Knobs(), VECS, lambda qs: np.array([[1.0, 0.0]] * len(qs), dtype=np.float32))


def task(tid, name):
    return Task(tid, f"query {tid}", "natural_language", {"type": "symbol", "symbol": name,
                                                         "file_suffix": f"{name}.py"}, "c")


GRAPH = Graph(len(SYMS), symbols_hash(SYMS), calls=[ids("alpha", "beta"), ids("gamma", "alpha"),
                                                    ids("delta", "omega")], inherits=[ids("beta", "alpha")])


def test_structural_swaps_gold_to_the_best_ranked_neighbour_the_dense_ranker_does_not_place_first():
    got = splits.structural([task("q0", "alpha"), task("q1", "gamma"), task("q2", "omega")], SYMS, GRAPH, dense(), "d")
    # q0: alpha ranks 1; its neighbours gamma (2) and beta (3): gamma, the nearer answer
    # q1: gamma ranks 2; its one neighbour alpha ranks 1: nothing to swap to, left out
    # q2: omega ranks 5 (in the top 10 of 5); its neighbour delta ranks 4
    assert [(t.task_id, t.gold["symbol"], t.gold["file_suffix"]) for t in got] == [
        ("q0", "gamma", "src/gamma.py"), ("q2", "delta", "src/delta.py")]
    assert got[0].gold["derived_from"] == task("q0", "alpha").gold and got[0].query == "query q0"
    # the same inputs give the same split, in any task order
    shuffled = [task("q2", "omega"), task("q1", "gamma"), task("q0", "alpha")]
    again = splits.structural(shuffled, SYMS, GRAPH, dense(), "d")
    assert sorted(again, key=lambda t: t.task_id) == got


def test_gold_outside_the_dense_top_k_is_left_out(monkeypatch):
    monkeypatch.setattr(splits, "DENSE_TOP_K", 4)
    got = splits.structural([task("q0", "alpha"), task("q2", "omega")], SYMS, GRAPH, dense(), "d")
    assert [t.task_id for t in got] == ["q0"]
    with pytest.raises(CrmatrixError, match=r"^d: split structural: no task has its gold in the dense top 4"):
        splits.structural([task("q2", "omega")], SYMS, GRAPH, dense(), "d")


EDGES = [{"caller": "alpha", "callee": "beta", "file": "alpha.py"},
         {"caller": "alpha", "callee": "gamma", "file": "src/alpha.py"},
         {"caller": "delta", "callee": "beta", "file": "delta.py"}]


def test_call_edges_become_callers_and_callees_tasks(tmp_path):
    f = tmp_path / "calls.json"
    f.write_text(json.dumps(EDGES))
    tasks = registry.load(f, "callgraph", "c", {"files": []}, SYMS)
    assert [(t.task_id, t.query_type, t.gold["answers"]) for t in tasks] == [
        ("callees:alpha.py:alpha", "callees", [["beta", ""]]),
        ("callees:src/alpha.py:alpha", "callees", [["gamma", ""]]),
        ("callees:delta.py:delta", "callees", [["beta", ""]]),
        ("callers:beta", "callers", [["alpha", "alpha.py"], ["delta", "delta.py"]]),
        ("callers:gamma", "callers", [["alpha", "src/alpha.py"]]),
    ]
    # qrels: the symbols each task's answers name
    assert relevance.qrels(tasks, SYMS)["callers:beta"] == ["src/alpha.py:1:alpha", "src/delta.py:1:delta"]
    f.write_text(json.dumps([{"caller": "alpha", "callee": "nothing", "file": "alpha.py"}]))
    with pytest.raises(CrmatrixError, match=r"row 0: field 'callee' 'nothing' is not a symbol of corpus 'c'"):
        registry.load(f, "callgraph", "c", {"files": []}, SYMS)


def test_callers_and_callees_are_scored_by_recall_and_precision(tmp_path):
    f = tmp_path / "calls.json"
    f.write_text(json.dumps(EDGES))
    tasks = registry.load(f, "callgraph", "c", {"files": []}, SYMS)

    class Answers(System):
        ANSWERS_CALLS = True

        def calls(self, direction, symbol, file_suffix):
            # callers of beta: one right (alpha), one wrong (omega); delta missed
            return {("callers", "beta"): [("alpha", "src/alpha.py"), ("omega", "src/omega.py")],
                    ("callees", "alpha"): [("beta", "src/beta.py")]}.get((direction, symbol), [])

    result = callgraph.evaluate(Answers(None), tasks)
    rows = {r["task_id"]: (r["recall"], r["precision"]) for r in result["tasks"]}
    assert rows == {"callees:alpha.py:alpha": (1.0, 1.0), "callees:delta.py:delta": (0.0, 0.0),
                    "callees:src/alpha.py:alpha": (0.0, 0.0), "callers:beta": (0.5, 0.5), "callers:gamma": (0.0, 0.0)}
    assert result["directions"]["callers"] == {"n": 2, "errors": 0, "recall": 0.25, "precision": 0.25, "f1": 0.25}
    # a system without call-graph answers: every task is a recorded failure scoring 0
    failed = callgraph.evaluate(System(None), tasks)
    assert failed["directions"]["callees"]["errors"] == 3 and failed["directions"]["callees"]["recall"] == 0.0
