"""A target per dataset, per corpus and per arm: what each slice holds, the jobs a slice's
target plans on the tiny matrix of test_workflow, its matrix built from its runs alone, and
the recipes of docs/slices.md for forcing a slice to run again."""

import json
import re

import pytest
from conftest import by_hand
from test_workflow import matrix, run  # noqa: F401 (the fixture)

from crmatrix import config
from crmatrix.config.matrix import Matrix
from crmatrix.pipeline import slices


def cfg() -> Matrix:
    return config.from_dict({
        "corpora": {"requests": {"path": "r"}, "flask": {"path": "f"}},
        "datasets": {"requests": {"file": "r.json", "corpus": "requests"},
                     "requests-calls": {"file": "rc.json", "corpus": "requests", "format": "callgraph"},
                     "flask": {"file": "f.json", "corpus": "flask"}},
        "arms": {"baseline": {}, "2e": {"CODELENS_RANK_SPARSE_TERM_WEIGHT": "1"},
                 "rrf": {"CRMATRIX_FUSION": "rrf"}},
        "systems": {"builtin": {"type": "builtin"},
                    "peer": {"type": "command", "arms": ["baseline", "rrf"],
                             "options": {"search": ["peer", "{query}"]}}},
    })


def test_each_dataset_corpus_and_arm_is_a_slice_named_by_its_kind():
    s = slices.slices(cfg())
    assert list(s) == ["dataset_flask", "dataset_requests", "dataset_requests-calls", "corpus_flask",
                       "corpus_requests", "arm_baseline", "arm_2e", "arm_rrf"]
    assert s["dataset_requests"] == {
        "kind": "dataset", "subject": "requests", "corpora": [], "calls": [],
        "cells": [("requests", "builtin", "baseline"), ("requests", "builtin", "2e"), ("requests", "builtin", "rrf"),
                  ("requests", "peer", "baseline"), ("requests", "peer", "rrf")]}
    # the corpus's own chain, its retrieval datasets and its call-graph set (the builtin answers calls)
    assert s["corpus_requests"]["corpora"] == ["requests"]
    assert s["corpus_requests"]["cells"] == s["dataset_requests"]["cells"]
    assert s["corpus_requests"]["calls"] == s["dataset_requests-calls"]["calls"] == [("requests-calls", "builtin")]
    assert s["dataset_requests-calls"]["cells"] == []


def test_an_arm_slice_holds_the_baseline_it_is_measured_against():
    s = slices.slices(cfg())
    # the peer does not take part in 2e, so it is not in that slice at all
    assert s["arm_2e"]["cells"] == [("flask", "builtin", "baseline"), ("flask", "builtin", "2e"),
                                    ("requests", "builtin", "baseline"), ("requests", "builtin", "2e")]
    assert [c for c in s["arm_rrf"]["cells"] if c[0] == "flask"] == [
        ("flask", "builtin", "baseline"), ("flask", "builtin", "rrf"), ("flask", "peer", "baseline"),
        ("flask", "peer", "rrf")]
    assert s["arm_baseline"]["cells"] == [("flask", "builtin", "baseline"), ("flask", "peer", "baseline"),
                                          ("requests", "builtin", "baseline"), ("requests", "peer", "baseline")]
    assert s["arm_2e"]["calls"] == [] and s["arm_2e"]["corpora"] == []


def planned(work, *args) -> list[str]:
    """The rules of the jobs a dry run plans, one entry per job, sorted."""
    out = run(work, "-n", *args).stdout
    return sorted(re.findall(r"^rule (\S+):$", out, flags=re.M))


CHAIN = ["extract_symbols", "fetch_corpus", "grep_baseline", "prepare_dataset"]
CELLS = ["cell_stats", "evaluate_arm"]  # a run and its cell's statistics


@pytest.mark.slow
def test_slice_targets_plan_their_runs_and_their_matrix_only(matrix):  # noqa: F811
    work, _ = matrix
    assert planned(work, "dataset_pathds") == sorted(
        ["dataset_pathds", "collect_slice_matrix", *CHAIN, *CELLS * 2])
    assert planned(work, "corpus_gitc") == sorted(["corpus_gitc", "collect_slice_matrix", *CHAIN, *CELLS * 2])
    # an arm: both datasets under it and under the baseline
    assert planned(work, "arm_knob") == sorted(["arm_knob", "collect_slice_matrix", *CHAIN, *CHAIN, *CELLS * 4])
    out = run(work, "-n", "arm_knob").stdout
    assert "results/matrix/slices/arm_knob/phase-matrix.md" in out and "results/matrix/phase-matrix" not in out


@pytest.mark.slow
@by_hand
def test_a_slice_matrix_is_made_of_its_runs_alone(matrix):  # noqa: F811
    work, _ = matrix
    run(work, "dataset_pathds")
    md = (work / "results/matrix/slices/dataset_pathds/phase-matrix.md").read_text()
    assert "| pathds | builtin | lexical | javascript | 2 | " in md and "gitds" not in md
    assert sorted(p.name for p in (work / "results/runs").iterdir()) == ["pathds"]
    assert not (work / "results/matrix/phase-matrix.md").exists()
    m = json.loads((work / "results/matrix/slices/dataset_pathds/phase-matrix.json").read_text())
    assert m["arms"] == ["baseline", "knob"] and [r["dataset"] for r in m["rows"]] == ["pathds"]

    # the whole matrix after it reuses the slice's runs; its row is the slice's row
    run(work, "all")
    whole = json.loads((work / "results/matrix/phase-matrix.json").read_text())
    assert [r for r in whole["rows"] if r["dataset"] == "pathds"] == m["rows"]
    assert planned(work, "dataset_pathds") == []

    # the recipes of docs/slices.md: force one rule of one slice (a rule with a file target), or stop early
    assert planned(work, "results/matrix/slices/dataset_pathds/phase-matrix.md", "-R", "evaluate_arm") == sorted(
        ["collect_slice_matrix", *CELLS * 2])
    assert planned(work, "dataset_gitds", "--forcerun", "prepare_dataset") == sorted(
        ["collect_slice_matrix", "dataset_gitds", *CELLS * 2, "grep_baseline", "prepare_dataset"])
    (work / "ds" / "gitds.json").write_text((work / "ds" / "gitds.json").read_text().replace("parse config",
                                                                                           "parse the config"))
    assert planned(work, "arm_knob", "--until", "evaluate_arm") == ["evaluate_arm", "evaluate_arm",
                                                                    "grep_baseline", "prepare_dataset"]
