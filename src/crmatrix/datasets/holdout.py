"""Held-out splits of a dataset (config `split:`): dev to iterate on, test to confirm once.

- `dev`: the head DEV_PERCENT % of each stratum after a seeded shuffle; `test`: the rest.
  Strata are Task.stratum (the repo or library a task is about; "" for all is one stratum),
  so both halves keep the dataset's mix. A stratum's dev size is n · 20 % rounded to the
  nearest integer (no n gives an exact half), e.g. strata of 50 / 30 / 20 give 10 / 6 / 4.
- `small_dev` / `small_test`: SMALL_SIZE tasks (or all, if fewer) of dev / test, apportioned
  over the strata by Hamilton's largest-remainder method, each stratum's share taken from
  the head of its shuffled order; test's 40 / 24 / 16 give 15 / 9 / 6.
- `all`: every task.

`sample` draws at most N tasks the way small splits do (a derived dataset's `max_queries`,
crmatrix.datasets.derived): apportioned over the strata, each share from the head of its
stratum's shuffled order; strata of 6 / 3 / 1 sampled to 5 give 3 / 2 / 0.

The shuffle orders a stratum by sha256 of (seed, task_id), ties (none in practice) by
task_id: the same order in every process (nothing rests on Python's hash randomization) and
whatever order the loader yields the tasks in. Tasks keep the loader's order in the result.
"""

from __future__ import annotations

import hashlib

from crmatrix import CrmatrixError
from crmatrix.datasets.tasks import Task

SPLITS = ("all", "dev", "test", "small_dev", "small_test")
# Splits whose scores are confirmations, counted by the test-split ledger (crmatrix.datasets.ledger):
# small_test is drawn from test, so a look at it is a look at test.
TEST_SPLITS = ("test", "small_test")
DEFAULT_SEED = 0
DEV_PERCENT = 20
SMALL_SIZE = 30


def dev_size(n: int) -> int:
    """DEV_PERCENT % of n, to the nearest integer."""
    return (n * DEV_PERCENT + 50) // 100


def apportion(sizes: dict[str, int], seats: int) -> dict[str, int]:
    """Hamilton (largest remainder): each stratum gets the floor of its quota seats·n/N, the
    seats left go to the largest remainders; ties go to the larger stratum, then by name."""
    total = sum(sizes.values())
    if total == 0:
        return {s: 0 for s in sizes}
    share = {s: seats * n // total for s, n in sizes.items()}
    left = seats - sum(share.values())
    by_remainder = sorted(sizes, key=lambda s: (-(seats * sizes[s] % total), -sizes[s], s))
    for s in by_remainder[:left]:
        share[s] += 1
    return share


def _order_key(seed: int, task_id: str) -> tuple[str, str]:
    return hashlib.sha256(f"{seed}\0{task_id}".encode()).hexdigest(), task_id


def _strata(tasks: list[Task], seed: int) -> dict[str, list[str]]:
    """Stratum -> its task ids in shuffled order."""
    out: dict[str, list[str]] = {}
    for t in tasks:
        out.setdefault(t.stratum, []).append(t.task_id)
    return {s: sorted(ids, key=lambda i: _order_key(seed, i)) for s, ids in sorted(out.items())}


def _heads(strata: dict[str, list[str]], size: int) -> set[str]:
    """`size` ids (or all, if fewer) apportioned over the strata, each share from its head."""
    seats = min(size, sum(map(len, strata.values())))
    share = apportion({s: len(ids) for s, ids in strata.items()}, seats)
    return {i for s, ids in strata.items() for i in ids[:share[s]]}


def _check_ids(tasks: list[Task], where: str) -> None:
    ids = [t.task_id for t in tasks]
    if len(set(ids)) != len(ids):
        dup = next(i for i in ids if ids.count(i) > 1)
        raise CrmatrixError(f"{where}: task id {dup!r} occurs twice; a split or a sample needs unique task ids")


def sample(tasks: list[Task], size: int, seed: int = DEFAULT_SEED, where: str = "dataset") -> list[Task]:
    """At most `size` of the tasks, stratified and seeded like a small split, in the loader's order."""
    _check_ids(tasks, where)
    chosen = _heads(_strata(tasks, seed), size)
    return [t for t in tasks if t.task_id in chosen]


def select(tasks: list[Task], split: str, seed: int = DEFAULT_SEED, where: str = "dataset") -> list[Task]:
    """The tasks of `split`, in the loader's order."""
    if split not in SPLITS:
        raise CrmatrixError(f"{where}: unknown split {split!r} (expected one of: {', '.join(SPLITS)})")
    _check_ids(tasks, where)
    if split == "all":
        return list(tasks)
    strata = _strata(tasks, seed)
    dev = {s: ids[:dev_size(len(ids))] for s, ids in strata.items()}
    test = {s: ids[dev_size(len(ids)):] for s, ids in strata.items()}
    chosen = {
        "dev": {i for ids in dev.values() for i in ids},
        "test": {i for ids in test.values() for i in ids},
        "small_dev": _heads(dev, SMALL_SIZE),
        "small_test": _heads(test, SMALL_SIZE),
    }[split]
    if not chosen:
        raise CrmatrixError(f"{where}: split {split} holds no task ({len(tasks)} tasks in {len(strata)} "
                            f"strata; dev takes {DEV_PERCENT} % of each, rounded)")
    return [t for t in tasks if t.task_id in chosen]
