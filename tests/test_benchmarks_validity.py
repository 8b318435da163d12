"""benchmarks/validity.py's own arithmetic: SWE-bench's datasets pooled with a shared task once,
and configurations merged only when they answer alike on every metric of both sets."""

import importlib.util

import numpy as np
from conftest import ROOT

_spec = importlib.util.spec_from_file_location("validity", ROOT / "benchmarks" / "validity.py")
validity = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(validity)

C1, C2 = ("bm25", "baseline"), ("hybrid", "baseline")


def _values(per_config: dict) -> dict:
    return {m: {c: np.array(v[m]) for c, v in per_config.items()} for m in validity.METRICS}


def test_pooled_keeps_the_first_datasets_copy_of_a_shared_task():
    lite = (["t1", "t2"], _values({C1: {"acc_all@5": [1, 0], "mrr": [1, 0.5]}}))
    verified = (["t2", "t3"], _values({C1: {"acc_all@5": [1, 1], "mrr": [0.25, 1]}}))
    n, copies, values = validity.pooled([lite, verified])
    assert (n, copies) == (3, ["t2"])
    assert values["acc_all@5"][C1].tolist() == [1, 0, 1]
    assert values["mrr"][C1].tolist() == [1, 0.5, 1]


def test_configurations_equal_on_one_metric_only_stay_apart():
    hist = _values({C1: {"acc_all@5": [1, 0], "mrr": [1, 0.5]}, C2: {"acc_all@5": [1, 0], "mrr": [0.5, 0.5]},
                    ("semantic", "baseline"): {"acc_all@5": [1, 0], "mrr": [1, 0.5]}})
    swe = _values({C1: {"acc_all@5": [1], "mrr": [1]}, C2: {"acc_all@5": [1], "mrr": [1]},
                   ("semantic", "baseline"): {"acc_all@5": [1], "mrr": [1]}})
    kept, merged = validity.distinct([C1, C2, ("semantic", "baseline")], hist, swe)
    assert kept == [0, 1]
    assert merged == {"bm25 · baseline": ["semantic · baseline"]}
