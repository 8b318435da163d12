"""A job started by its rule's shell command (common.smk's `light`): its log, files and
parameters through its arguments."""

import pytest

from crmatrix.pipeline import shell_job


def test_a_jobs_files_and_parameters_come_back_as_the_rule_named_them():
    files = shell_job.files({"run": "runs/a.json", "base": "runs/b.json", "many": ["x", "y"]},
                            {"cell": "cells/a.json"}, ["cells/a.json"], {"dataset": "d", "arm": "a"})
    params = shell_job.parameters({"format": None, "cell": {"top_k": 100, "env": {"K": "1"}}})
    job = shell_job.read(["cell_stats.py", "logs/a.log", files, params])
    assert job == shell_job.ShellJob(
        log="logs/a.log", input={"run": "runs/a.json", "base": "runs/b.json", "many": ["x", "y"]},
        output={"cell": "cells/a.json"}, files=["cells/a.json"], wildcards={"dataset": "d", "arm": "a"},
        params={"format": None, "cell": {"top_k": 100, "env": {"K": "1"}}})


def test_the_same_parameters_are_the_same_argument_whatever_their_order():
    # Snakemake's params trigger compares the argument with the last run's
    one = shell_job.parameters({"y": 1, "x": {"b": 2, "a": [1]}})
    two = shell_job.parameters({"x": {"a": [1], "b": 2}, "y": 1})
    assert one == two == '{"x":{"a":[1],"b":2},"y":1}'


def test_a_script_started_without_its_job_says_what_it_takes():
    with pytest.raises(SystemExit, match=r"^crmatrix: cell_stats.py takes a job's log, its files and its parameters"):
        shell_job.read(["cell_stats.py", "logs/a.log"])


def test_a_job_starts_by_removing_what_a_killed_run_of_it_left(tmp_path, monkeypatch):
    """`kill -9` mid-write leaves a writer's temporary beside the output (a file, or a staged
    directory): the job's next run removes them, and leaves another output's alone."""
    from crmatrix import atomic
    from crmatrix.pipeline import jobs

    monkeypatch.chdir(tmp_path)
    out = tmp_path / "results" / "runs" / "baseline.json"
    out.parent.mkdir(parents=True)
    left = [out.parent / ".baseline.json.hzk64pf1.tmp", out.parent / ".baseline.json.a_b0c9z8.tmp"]
    left[0].write_text("{half")
    left[1].mkdir()
    others = [out.parent / ".baseline.json.gz.hzk64pf1.tmp", out.parent / ".other.json.hzk64pf1.tmp"]
    for p in others:
        p.write_text("another job's")
    with jobs.job(str(tmp_path / "job.log"), [str(out)]):
        atomic.write_text(out, "{}")
    assert not any(p.exists() for p in left)
    assert all(p.exists() for p in others) and out.read_text() == "{}"
