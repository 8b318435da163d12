"""Dev/test splits: stratified, seeded, the same in every process."""

import subprocess
import sys
from collections import Counter

import pytest

from crmatrix import CrmatrixError
from crmatrix.datasets import holdout
from crmatrix.datasets.tasks import Task


def make(sizes: dict[str, int]) -> list[Task]:
    return [Task(f"{s}-{i:03d}", f"query {s} {i}", "natural_language", {"type": "symbol", "symbol": "x",
                                                                        "file_suffix": "x.py"}, "c", s)
            for s, n in sizes.items() for i in range(n)]


TASKS = make({"alpha": 50, "beta": 30, "gamma": 20})


def strata(tasks):
    return dict(sorted(Counter(t.stratum for t in tasks).items()))


def test_strata_50_30_20_give_dev_10_6_4_and_test_40_24_16():
    dev, test = holdout.select(TASKS, "dev", 7), holdout.select(TASKS, "test", 7)
    assert strata(dev) == {"alpha": 10, "beta": 6, "gamma": 4} and len(dev) == 20
    assert strata(test) == {"alpha": 40, "beta": 24, "gamma": 16} and len(test) == 80
    assert not {t.task_id for t in dev} & {t.task_id for t in test}
    assert holdout.select(TASKS, "all", 7) == TASKS


def test_small_splits_apportion_thirty_by_largest_remainder_from_their_half():
    test, small = holdout.select(TASKS, "test"), holdout.select(TASKS, "small_test")
    assert strata(small) == {"alpha": 15, "beta": 9, "gamma": 6}
    assert {t.task_id for t in small} <= {t.task_id for t in test}
    # dev has 20 tasks, fewer than 30: small_dev is all of dev
    assert holdout.select(TASKS, "small_dev") == holdout.select(TASKS, "dev")


def test_hamilton_gives_the_seats_left_to_the_largest_remainders():
    # quotas 30·7/12 = 17.5, 30·4/12 = 10, 30·1/12 = 2.5: floors 17 + 10 + 2, one seat left;
    # the remainders of a and c tie (0.5), the larger stratum a takes it
    assert holdout.apportion({"a": 7, "b": 4, "c": 1}, 30) == {"a": 18, "b": 10, "c": 2}
    # quotas 10·5/9 = 5.56, 10·3/9 = 3.33, 10·1/9 = 1.11: 5 + 3 + 1, the seat left to a (.56)
    assert holdout.apportion({"a": 5, "b": 3, "c": 1}, 10) == {"a": 6, "b": 3, "c": 1}
    assert [holdout.dev_size(n) for n in (1, 2, 3, 7, 8, 50)] == [0, 0, 1, 1, 2, 10]


def test_same_seed_same_split_in_any_order_another_seed_another():
    dev = holdout.select(TASKS, "dev", 3)
    assert holdout.select(list(reversed(TASKS)), "dev", 3) == list(reversed(dev))
    other = holdout.select(TASKS, "dev", 4)
    assert strata(other) == strata(dev) and {t.task_id for t in other} != {t.task_id for t in dev}


def test_the_split_is_the_same_in_another_process_whatever_its_hash_seed():
    code = ("import sys; sys.path.insert(0, 'tests'); from test_holdout import TASKS; "
            "from crmatrix.datasets import holdout; "
            "print(','.join(t.task_id for t in holdout.select(TASKS, 'small_test', 11)))")
    here = ",".join(t.task_id for t in holdout.select(TASKS, "small_test", 11))
    for hash_seed in ("1", "2"):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                             env={"PYTHONHASHSEED": hash_seed, "PYTHONPATH": ":".join(sys.path)}).stdout.strip()
        assert out == here


def test_one_stratum_when_tasks_have_none_and_clear_errors():
    plain = [Task(f"q{i:03d}", f"q {i}", "identifier", {}, "c") for i in range(12)]
    assert len(holdout.select(plain, "dev")) == 2 and len(holdout.select(plain, "test")) == 10
    with pytest.raises(CrmatrixError, match=r"^ds.json: split dev holds no task \(2 tasks in 1 strata; dev takes 20 %"):
        holdout.select(plain[:2], "dev", where="ds.json")
    with pytest.raises(CrmatrixError, match=r"^d: unknown split 'train' \(expected one of: all, dev, test, small_dev"):
        holdout.select(plain, "train", where="d")
    with pytest.raises(CrmatrixError, match=r"^d: task id 'q000' occurs twice"):
        holdout.select(plain + plain[:1], "test", where="d")
