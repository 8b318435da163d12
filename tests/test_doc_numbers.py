"""The numbers the README and docs state about the shipped matrices, held to what the code
computes from those configs: a config edit that changes one fails here until the page says so."""

import re

import pytest
from conftest import ROOT

from crmatrix import config
from crmatrix.config.plan import Plan

WORDS = {"twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15}


def plan(name: str) -> Plan:
    return Plan(config.load(ROOT / "config" / name))


def evaluations(name: str) -> int:
    return len(plan(name).run_files())


def stated(page: str, pattern: str) -> int:
    """The number `pattern`'s group holds on `page` (a word or digits), which must be there once."""
    found = re.findall(pattern, (ROOT / page).read_text(), flags=re.IGNORECASE)
    assert len(found) == 1, f"{page}: expected one match of {pattern!r}, found {found}"
    value = found[0].replace(",", "")
    return WORDS[value.lower()] if value.lower() in WORDS else int(value)


def sweep_cells(name: str) -> int:
    return sum(len(g["cells"]) for g in plan(name).matrix.sweeps.values())


# (page, pattern with one group, what the code computes)
DEFAULT = "config.yaml"
SEED = "seed-matrix.yaml"
CASES = [
    ("README.md", r"\b(\w+) arms: the seed's", lambda: len(plan(DEFAULT).matrix.arms)),
    ("README.md", r"\b([\d,]+) evaluations in all", lambda: evaluations(DEFAULT)),
    ("docs/arms.md", r"would add [\d,]+ evaluations to its ([\d,]+)", lambda: evaluations(DEFAULT)),
    # a 3×3 grid on the default matrix: nine arms on every dataset of each system taking every arm
    ("docs/arms.md", r"would add ([\d,]+) evaluations", lambda: 9 * sum(
        len(plan(DEFAULT).system_datasets[s]) for s, sc in plan(DEFAULT).matrix.systems.items()
        if len(sc.arms) == len(plan(DEFAULT).matrix.arms))),
    ("docs/arms.md", r"seed-matrix\.yaml\s+# \.\.\. (\d+) arms", lambda: len(plan(SEED).matrix.arms)),
    ("docs/arms.md", r"seed-matrix\.yaml\s+# \.\.\. \d+ arms, (\d+) of them from", lambda: sweep_cells(SEED)),
    ("docs/datasets.md", r"(\d+) arms over \d+\s+datasets, [\d,]+ evaluations", lambda: len(plan(SEED).matrix.arms)),
    ("docs/datasets.md", r"\d+ arms over (\d+)\s+datasets, [\d,]+ evaluations",
     lambda: len(plan(SEED).matrix.retrieval_datasets)),
    ("docs/datasets.md", r"\d+ arms over \d+\s+datasets, ([\d,]+) evaluations", lambda: evaluations(SEED)),
    ("docs/layout.md", r"seed's matrix at full size: (\d+) corpora",
     lambda: len(plan(SEED).matrix.corpora) - len(plan(SEED).matrix.corpora_of("view"))),
    ("docs/layout.md", r"seed's matrix at full size: \d+ corpora, (\d+) datasets",
     lambda: len(plan(SEED).matrix.datasets)),
    ("docs/layout.md", r"seed's matrix at full size: \d+ corpora, \d+ datasets, (\d+) arms",
     lambda: len(plan(SEED).matrix.arms)),
    # the gate's example verdict: every dataset both sides of the default pair run
    ("docs/gate.md", r"PASS on all (\d+) datasets", lambda: len(plan(DEFAULT).system_datasets["builtin"])),
]


@pytest.mark.parametrize("page,pattern,computed", CASES, ids=[f"{c[0]}:{c[1][:30]}" for c in CASES])
def test_a_stated_number_is_the_computed_one(page, pattern, computed):
    assert stated(page, pattern) == computed()
