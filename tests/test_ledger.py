"""The test-split ledger: unit tests, an indexed arm through the evaluation stage, then through
Snakemake on the tiny matrix of test_workflow."""

import datetime as dt
import json
import re

import fixture_runs
import pytest
import yaml
from conftest import by_hand
from test_engine import model_dir  # noqa: F401 (a fixture)
from test_systems import prepared, system_conf  # noqa: F401 (prepared is a fixture)
from test_systems import run as score
from test_workflow import matrix, run  # noqa: F401 (matrix is a fixture)

from crmatrix import CrmatrixError, atomic
from crmatrix.datasets import ledger
from crmatrix.engine.knobs import index_spec
from crmatrix.pipeline import rescoring
from crmatrix.results.run import Run
from crmatrix.stages import build_index

SYSTEM = {"type": "builtin", "methods": ["lexical"]}


def fake_run(dataset="d", arm="baseline", split="test", env=None, file="ds/d.json", sha="a" * 64):
    doc = fixture_runs.run(dataset, arm, [1], "python")
    doc["provenance"].update(dataset={"name": dataset, "file": file, "sha256": sha, "split": split, "seed": 0},
                             system={"name": "builtin", **SYSTEM}, arm={"name": arm, "env": env or {}}, model=None)
    return fixture_runs.typed(doc)


def test_a_config_is_what_the_score_stands_on_not_names_or_paths():
    key = ledger.run_key(fake_run())
    assert ledger.run_key(fake_run(dataset="renamed", arm="other", file="elsewhere/d.json")) == key
    assert ledger.config_key("a" * 64, "test", SYSTEM, {}, None) == key  # what evaluate_arm computes before a query
    assert len({key, ledger.run_key(fake_run(split="small_test")), ledger.run_key(fake_run(sha="b" * 64)),
                ledger.run_key(fake_run(env={"CODELENS_RANK_SPARSE_TERM_WEIGHT": "1"}))}) == 4


def test_runs_are_counted_once_each_and_a_second_scoring_is_refused_unless_forced(tmp_path):
    path = tmp_path / "baselines" / "test-ledger.json"
    book = ledger.read(path)
    runs = [ledger.scoring(fake_run(), "r1"), ledger.scoring(fake_run(split="dev"), "r2"),
            ledger.scoring(fake_run(split="all", arm="knob"), "r3")]
    assert runs[1:] == [None, None]  # dev and all are no test splits
    runs = [s for s in runs if s]
    assert ledger.add(book, runs, dt.date(2026, 12, 1)) is True
    # the same run file again (a matrix rebuilt over unchanged runs): nothing to add
    assert ledger.add(book, runs[:1], dt.date(2026, 12, 2)) is False
    ledger.write(book, path)
    key = ledger.run_key(fake_run())
    assert list(ledger.read(path)["configs"]) == [key]
    ledger.check(ledger.run_key(fake_run(split="small_test")), "d", "small_test", False, path)  # not scored yet
    with pytest.raises(CrmatrixError) as e:
        ledger.check(key, "d", "test", False, path)
    assert str(e.value) == (f"config {key} was scored on test split of d 1 time(s) on 2026-12-01 ({path}); "
                            "iterate on small_dev, or pass --config force_test=true to score it again")
    ledger.check(key, "d", "test", True, path)
    assert ledger.add(book, [ledger.scoring(fake_run(), "r4")], dt.date(2026, 12, 3))  # another run file
    assert ledger.entries(book, runs) == [
        {"dataset": "d", "system": "builtin", "arm": "baseline", "split": "test", "config": key, "count": 2,
         "dates": ["2026-12-01", "2026-12-03"]}]
    path.write_text('{"configs": []}')
    with pytest.raises(CrmatrixError, match=r"test-ledger.json: not a crmatrix test-split ledger"):
        ledger.read(path)


def test_an_indexed_arm_is_keyed_with_its_model_before_scoring_as_its_run_records_it(
        prepared, model_dir, tmp_path, monkeypatch):  # noqa: F811
    monkeypatch.chdir(tmp_path)  # the ledger lives under the working directory
    conf = system_conf("builtin", {}, methods=["semantic"])
    index = tmp_path / "index"
    build_index.run(symbols=prepared / "symbols.jsonl", manifest=prepared / "manifest.json", model_dir=model_dir,
                    knobs=index_spec({}, None), cache_dir=tmp_path / "cache", out=index)

    def evaluate():
        return score(prepared, tmp_path, conf, index=index, model=model_dir, cache_dir=tmp_path / "cache",
                     split={"split": "test", "seed": 0})

    first = Run.from_json(evaluate())
    key = ledger.run_key(first)
    sha = atomic.sha256_file(prepared / "ds.json")
    assert first.provenance.model["sha256"] == atomic.read_json(model_dir / "model.json")["sha256"]
    assert ledger.config_key(sha, "test", conf, {}, None) != key  # the model is part of the config
    # what the workflow checks before any job runs is the key the run records
    planned = rescoring.Planned("results/runs/ds/fake/a.json", "ds", "test", prepared / "ds.json", conf, {},
                                model_dir)
    assert rescoring.planned_key(planned) == key
    assert rescoring.planned_key(planned, remade={model_dir}) is None  # a model made anew: keyed by the job

    book = ledger.read()
    ledger.add(book, [ledger.scoring(first, "r1")])
    ledger.write(book)
    with pytest.raises(CrmatrixError, match=rf"^results/runs/ds/fake/a.json: config {key} was scored on test "):
        rescoring.refuse([planned], set(), force=False)
    rescoring.refuse([planned], set(), force=True)
    # and the job itself, when the plan could not key it, refuses before its first query
    with pytest.raises(CrmatrixError, match=rf"^builtin system 'fake' on dataset 'ds', arm 'a': config {key} "
                                            r"was scored on test split of ds 1 time\(s\) on "):
        evaluate()


@pytest.mark.slow
@by_hand
def test_through_snakemake_a_test_split_is_scored_once_then_refused_until_forced(matrix):  # noqa: F811
    work, cfg = matrix
    cfg["datasets"]["gitds"]["split"] = "test"
    (work / "config.yaml").write_text(yaml.safe_dump(cfg))
    book = work / "baselines" / "test-ledger.json"

    # the runs alone, no matrix (as if killed before it): nothing is counted
    run(work, "results/runs/gitds/builtin/baseline.json", "results/runs/gitds/builtin/knob.json")
    tasks = [json.loads(line) for line in (work / "results/datasets/gitds.jsonl").read_text().splitlines()]
    assert len(tasks) == 2  # 3 tasks: dev takes round(0.6) = 1
    assert not book.exists()

    run(work, "all")
    counted = json.loads(book.read_text())["configs"]
    assert sorted((e["dataset"], e["arm"], len(e["scorings"])) for e in counted.values()) == [
        ("gitds", "baseline", 1), ("gitds", "knob", 1)]
    md = (work / "results/matrix/phase-matrix.md").read_text()
    assert "| gitds | builtin | lexical | python | 2 | " in md
    rows = re.findall(r"^\| gitds \| test \| builtin \| (\w+) \| `([0-9a-f]{12})` \| (\d) \| ", md, flags=re.M)
    assert sorted((arm, n) for arm, _, n in rows) == [("baseline", "1"), ("knob", "1")]
    assert "| pathds | " not in md.split("## Test-split ledger")[1].split("##")[0]  # split all: not in it

    # nothing to do is never refused, and force_test re-plans nothing (it is no parameter)
    assert "Nothing to be done" in run(work, "-n", "all").stdout
    assert "Nothing to be done" in run(work, "-n", "all", "--config", "force_test=true").stdout

    # scoring the same configs on test again: refused once the plan is made, before Snakemake removes
    # the runs it would replace, naming the first run and the count
    keys = dict((arm, k) for arm, k, _ in rows)
    key = keys["baseline"]
    today = json.loads(book.read_text())["configs"][key]["scorings"][0]["date"]

    def refusal(arm: str) -> str:
        return (f"crmatrix: results/runs/gitds/builtin/{arm}.json: config {keys[arm]} was scored on test split of "
                f"gitds 1 time(s) on {today} (baselines/test-ledger.json); iterate on small_dev, or pass "
                f"--config force_test=true to score it again")

    kept = {p: p.read_bytes() for p in (work / "results").rglob("*") if p.is_file()}
    proc = run(work, "all", "--forcerun", "evaluate_arm", check=False)
    assert proc.returncode != 0
    assert proc.stderr.strip().splitlines()[-1] == refusal("baseline")
    assert {p: p.read_bytes() for p in (work / "results").rglob("*") if p.is_file()} == kept  # nothing removed
    assert json.loads(book.read_text())["configs"] == counted
    assert "Nothing to be done" in run(work, "-n", "all").stdout

    # a run gone missing is always planned again (here refused again: scoring it is another look)
    (work / "results/runs/gitds/builtin/knob.json").unlink()
    assert "results/runs/gitds/builtin/knob.json" in run(work, "-n", "all").stdout
    proc = run(work, "all", check=False)
    assert proc.returncode != 0 and proc.stderr.strip().splitlines()[-1] == refusal("knob")

    run(work, "all", "--forcerun", "evaluate_arm", "--config", "force_test=true")
    assert sorted(len(e["scorings"]) for e in json.loads(book.read_text())["configs"].values()) == [2, 2]
    assert f"| gitds | test | builtin | baseline | `{key}` | 2 | {today} |" in (
        work / "results/matrix/phase-matrix.md").read_text()
