"""Sweeps: a grid of knob values expanded at config validation into named arms."""

import pytest
import yaml
from conftest import ROOT

from crmatrix import CrmatrixError, config
from crmatrix.config.matrix import Matrix
from crmatrix.config.plan import Plan
from crmatrix.config.yamlfile import read_yaml

OFF = {"CODELENS_EMBED_HINT_AUTO": "0"}
SPARSE = {**OFF, "CODELENS_RANK_SPARSE_TERM_WEIGHT": "1"}
THRESHOLD, MAX = "CODELENS_RANK_SPARSE_THRESHOLD", "CODELENS_RANK_SPARSE_MAX"


def cfg(sweep_block: dict, arms: dict | None = None, **extra) -> Matrix:
    return config.from_dict({"corpora": {"c": {"path": "."}}, "datasets": {"d": {"file": "d.json", "corpus": "c"}},
                            "arms": arms or {"baseline": OFF}, "sweeps": sweep_block, **extra})


def error_of(sweep_block: dict, arms: dict | None = None, **extra) -> str:
    with pytest.raises(CrmatrixError) as e:
        cfg(sweep_block, arms, **extra)
    return str(e.value)


GRID = {"sparse": {"env": SPARSE, "axes": [{"var": THRESHOLD, "name": "t", "values": ["20", "040", "60"]},
                                           {"var": MAX, "name": "m", "values": ["20", "40"]}]}}


def test_a_grid_expands_into_named_arms_in_grid_order_after_the_declared_ones():
    c = cfg(GRID)
    assert list(c.arms) == ["baseline", "sparse-t20-m20", "sparse-t20-m40", "sparse-t40-m20", "sparse-t40-m40",
                               "sparse-t60-m20", "sparse-t60-m40"]
    # each cell is the sweep's env plus one value per axis, in one spelling ("040" is 40)
    assert c.arms["sparse-t40-m20"].env == {**SPARSE, THRESHOLD: "40", MAX: "20"}
    # query-time knobs: every cell shares the baseline's index
    plan = Plan(c)
    assert {plan.index_key("builtin", a, "c") for a in c.arms} == {plan.index_key("builtin", "baseline", "c")}


def test_default_axis_names_and_a_one_axis_sweep():
    c = cfg({"hint": {"env": OFF, "axes": [{"var": "CODELENS_EMBED_HINT_LINES", "values": ["1", "3"]}]}})
    assert list(c.arms)[1:] == ["hint-lines1", "hint-lines3"]
    assert c.sweeps == {"hint": {"axes": [{"var": "CODELENS_EMBED_HINT_LINES", "name": "lines",
                                                  "values": ["1", "3"]}],
                                        "cells": [{"arm": "hint-lines1", "values": ["1"]},
                                                  {"arm": "hint-lines3", "values": ["3"]}]}}
    # an index-time knob: one index per value, and 1 line is the default, so the baseline's index
    assert list(Plan(c).index_arms("builtin", "c").values()) == ["baseline", "hint-lines3"]


def test_grids_say_which_cell_holds_which_values():
    grid = cfg(GRID).sweeps["sparse"]
    assert grid["axes"] == [{"var": THRESHOLD, "name": "t", "values": ["20", "40", "60"]},
                            {"var": MAX, "name": "m", "values": ["20", "40"]}]
    assert grid["cells"][3] == {"arm": "sparse-t40-m40", "values": ["40", "40"]}
    assert len(grid["cells"]) == 6


def test_cells_may_be_named_wherever_arms_are():
    c = cfg(GRID, comparisons=["sparse-t40-m40"],
            systems={"builtin": {"type": "builtin", "arms": ["baseline", "sparse-t20-m20"]}})
    assert c.comparisons == ("sparse-t40-m40",)
    assert c.systems["builtin"].arms == ("baseline", "sparse-t20-m20")


@pytest.mark.parametrize("block, arms, message", [
    (GRID, {"baseline": OFF, "sparse-t20-m40": SPARSE},
     "config: sweeps.sparse: its cell 'sparse-t20-m40' has the name of the arm arms.sparse-t20-m40; rename the sweep "
     "or the arm"),
    ({"a-t1": {"axes": [{"var": MAX, "name": "m", "values": ["5", "6"]}]},
      "a": {"axes": [{"var": THRESHOLD, "name": "t1-m", "values": ["5", "6"]}]}}, None,
     "config: sweeps.a: its cell 'a-t1-m5' is also a cell of sweeps.a-t1; rename one of the sweeps"),
    ({"s": {"env": SPARSE, "axes": [{"var": "CODELENS_RANK_SPARSE_TERM_WEIGHT", "values": ["0", "1"]}]}}, None,
     "config: sweeps.s.axes.0.var: CODELENS_RANK_SPARSE_TERM_WEIGHT is also set in sweeps.s.env (an axis varies it; "
     "env holds the variables every cell shares)"),
    ({"s": {"axes": [{"var": MAX, "values": ["5", "6"]}, {"var": MAX, "name": "m2", "values": ["5", "6"]}]}}, None,
     "config: sweeps.s.axes.1.var: CODELENS_RANK_SPARSE_MAX is already axis 0"),
    ({"s": {"axes": [{"var": MAX, "values": ["5", "6"]}, {"var": "OTHER_TOOL_MAX", "values": ["5", "6"]}]}}, None,
     "config: sweeps.s.axes.1: name 'max' is also axis 0's; give one of them another `name`"),
    ({"s": {"axes": [{"var": MAX, "values": ["20", "lots"]}]}}, None,
     "config: sweeps.s.axes.0.values.1: CODELENS_RANK_SPARSE_MAX='lots': expected a whole number (5..50)"),
    ({"s": {"axes": [{"var": MAX, "values": ["20", " 020"]}]}}, None,
     "config: sweeps.s.axes.0.values.1: ' 020' is the value of values.0 spelled another way"),
    ({"s": {"axes": [{"var": "OTHER_TOOL_MODE", "values": ["fast", "a/b"]}]}}, None,
     "config: sweeps.s.axes.0.values.1: 'a/b' cannot be part of an arm name (letters, digits, ., _ and - only)"),
    ({"s": {"axes": [{"var": "CRMATRIX_MODEL", "values": ["minilm", "bge"]}]}}, None,
     "config: sweeps.s.axes.0.values.1: 'bge' is not one of the models (minilm)"),
    ({"a b": {"axes": [{"var": MAX, "values": ["5", "6"]}]}}, None,
     "config: sweeps.a b: 'a b' cannot start an arm name (a letter or digit, then letters, digits, ., _ and - only)"),
    ({"s": {"env": {"CODELENS_RANK_SPARSE": "1"}, "axes": [{"var": MAX, "values": ["5", "6"]}]}}, None,
     "config: sweeps.s.env: unknown variable CODELENS_RANK_SPARSE (did you mean CODELENS_RANK_SPARSE_MAX?)"),
    ({"s": {"axes": [{"var": MAX, "values": ["5"]}]}}, None,
     "config: sweeps.s.axes.0.values: expected at least 2 items, got 1"),
    ({"s": {"axes": [{"var": MAX, "values": ["5", "6"]}] * 3}}, None,
     "config: sweeps.s.axes: expected at most 2 items, got 3"),
    ({"s": {"axes": [{"var": MAX, "values": [5, 6]}]}}, None,
     "config: sweeps.s.axes.0.values.0: expected string, got an integer 5 (quote it in YAML)"),
])
def test_bad_sweeps_are_one_line_naming_the_sweep_and_key(block, arms, message):
    got = error_of(block, arms)
    assert got.split("; known:")[0] == message.split("; known:")[0]
    assert "\n" not in got


def test_the_seed_matrix_carries_the_seeds_three_by_three_sparse_sweep():
    c = config.load(ROOT / "config" / "seed-matrix.yaml")
    grid = c.sweeps["sparse"]
    assert [a["values"] for a in grid["axes"]] == [["20", "40", "60"], ["20", "30", "40"]]
    assert [cell["arm"] for cell in grid["cells"]] == [f"sparse-t{t}-m{m}" for t in (20, 40, 60) for m in (20, 30, 40)]
    # the seed's tuned arm (as written) is the grid's cell (40, 40)
    assert c.arms["sparse-t40-m40"].env == read_yaml(ROOT / "config" / "seed-matrix.yaml")["arms"]["2e-only"]
    raw = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    assert "sweeps" not in raw  # the default matrix stays small (docs/arms.md: "Sweeps")


def test_validate_counts_the_cells_among_the_arms(capsys):
    from crmatrix.cli import main

    path = str(ROOT / "config" / "seed-matrix.yaml")
    assert main(["validate", path]) == 0
    assert capsys.readouterr().out == (f"{path}: ok (8 corpora + 8 docs-withheld views, 24 datasets, 2 systems, "
                                       "29 arms, 9 of them from 1 sweep)\n")
