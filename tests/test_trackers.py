"""Trackers: the JSONL event log of a run, and MLflow when its extra is installed."""

import json

import fixture_runs
import pytest

from crmatrix import CrmatrixError, atomic, trackers
from crmatrix.stages import track_run


@pytest.fixture
def two_runs(tmp_path):
    paths = []
    for arm in ("baseline", "stacked"):
        r = fixture_runs.run("gamma", arm, fixture_runs.RANKS["gamma"][1][arm], "rust")
        r["provenance"].update({"crmatrix_version": "0.1.0", "python": "3.11.2", "config_hash": "c" * 64})
        r["provenance"]["arm"]["env"] = {"CODELENS_RANK_SPARSE_TERM_WEIGHT": "1"} if arm == "stacked" else {}
        paths.append(fixture_runs.write(tmp_path / "runs" / "gamma" / "builtin" / f"{arm}.json", r))
        (tmp_path / "trec" / arm).mkdir(parents=True)
        (tmp_path / "trec" / arm / "hybrid.run").write_text("q001 Q0 a 1 1.0 x\n")
    return paths, [tmp_path / "trec" / a for a in ("baseline", "stacked")]


def test_flatten():
    assert trackers.flatten({"b": {"y": [1, 2], "x": None}, "a": 1.5}) == {"a": "1.5", "b.y": "1,2"}


def test_jsonl_event_log_per_run(tmp_path, two_runs):
    runs, trec = two_runs
    trackers.event_log(runs[1], trec[1], tmp_path / "stacked.jsonl")
    events = [json.loads(line) for line in (tmp_path / "stacked.jsonl").read_text().splitlines()]
    assert [e["event"] for e in events] == ["run_start", "metrics", "artifact", "artifact", "run_end"]
    start = events[0]
    assert start["run"] == "gamma/builtin/stacked"
    assert start["params"]["env.CODELENS_RANK_SPARSE_TERM_WEIGHT"] == "1"
    assert start["params"]["system.methods"] == "hybrid,lexical" and start["params"]["top_k"] == "10"
    assert start["tags"]["dataset_sha256"] == "gamma-sha" and start["tags"]["run_sha256"] == atomic.sha256_file(runs[1])
    metrics = events[1]["metrics"]
    assert metrics["hybrid.mrr"] == pytest.approx(0.7833333333333333)
    assert metrics["hybrid.identifier.mrr"] == pytest.approx((1 + 1 + 0 + 1 + 1 / 3) / 5)  # q002..q010
    assert metrics["lexical.latency_p50_ms"] == 1.875 and metrics["hybrid.errors"] == 0.0
    assert events[2] == {"event": "artifact", "path": str(runs[1]), "sha256": atomic.sha256_file(runs[1]),
                         "time": events[2]["time"]}
    assert events[3]["path"] == str(trec[1]) and events[3]["sha256"] is None  # a directory
    assert events[-1]["status"] == "FINISHED"


def test_an_unknown_tracker_is_named():
    with pytest.raises(CrmatrixError, match=r"^trackers.mlfow: unknown tracker 'mlfow' \(did you mean 'mlflow'\? "
                                            r"known: jsonl, mlflow"):
        trackers.make("mlfow", {})


def test_mlflow_records_each_run_once(tmp_path, two_runs, monkeypatch):
    """The real tracker against a local file store: the test extra installs the mlflow extra, so
    this runs (never skips) in `make test`."""
    import mlflow

    monkeypatch.delenv("MLFLOW_ALLOW_FILE_STORE", raising=False)
    runs, trec = two_runs
    options = {"mlflow": {"tracking_uri": str(tmp_path / "mlruns"), "experiment": "t"}}
    receipts = [tmp_path / f"{p.stem}.sent.json" for p in runs]
    for path, trec_dir, receipt in zip(runs, trec, receipts, strict=True):
        assert track_run.run(run_path=path, trec_dir=trec_dir, options=options, out=receipt) == {"mlflow": True}
    # a rerun of a tracking job: MLflow holds the run (by its file's sha256) and is not told twice
    assert track_run.run(run_path=runs[1], trec_dir=trec[1], options=options, out=receipts[1]) == {"mlflow": False}
    assert atomic.read_json(receipts[1]) == {"mlflow": False}
    client = mlflow.MlflowClient(tracking_uri=(tmp_path / "mlruns").as_uri())
    exp = client.get_experiment_by_name("t")
    found = client.search_runs([exp.experiment_id], "tags.`mlflow.runName` = 'gamma/builtin/stacked'")
    assert len(found) == 1
    run = found[0]
    assert run.info.status == "FINISHED"
    assert run.data.params["env.CODELENS_RANK_SPARSE_TERM_WEIGHT"] == "1"
    assert run.data.metrics["hybrid.acc_at_1"] == pytest.approx(0.7)  # '@' is not an MLflow key character
    assert run.data.tags["crmatrix.dataset_sha256"] == "gamma-sha"
    assert sorted(a.path for a in client.list_artifacts(run.info.run_id)) == ["stacked", "stacked.json"]
