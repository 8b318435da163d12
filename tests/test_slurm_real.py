"""The cluster profiles on a real Slurm (tests/real_slurm.py: Debian's 22.05 on one node, set up
and torn down here; skipped where that cannot be). The tiny matrix of test_cluster through
profiles/slurm and profiles/cluster-generic gives the matrix and runs of a local run, the
remote jobs go in the profiles' job groups, each group job asks Slurm for the CPUs, memory and
time limit its jobs need together, and the local rules stay off Slurm. A job cancelled with
scancel fails the run, naming the group, its rules and the job; the rerun finishes it. A job over
its memory is killed by Slurm and reported with Slurm's state and reason."""

import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest
import real_slurm
from conftest import by_hand, make_two_commit_repo, snakemake_cmd
from test_cluster import GROUPS, LOCAL, PROFILES, REMOTE, SUBMITTED, group_jobs, job_counts
from test_recovery import runs
from test_workflow import write_matrix

UNAVAILABLE = real_slurm.unavailable()
pytestmark = [pytest.mark.slow, by_hand, pytest.mark.skipif(UNAVAILABLE is not None, reason=UNAVAILABLE or "")]

# Seconds for one Snakemake run. `timeout -k` also ends a run that ignores SIGTERM, as the
# slurm plugin does when its status command hangs.
RUN_TIMEOUT = 600
# Every group job of the tiny matrix once, by name.
GROUP_JOBS = [name for name, _ in GROUPS]
# The node's 2 CPUs (real_slurm.unavailable: at least 2) as the widest job: the profiles' 4 would
# ask for a node this cluster does not have. Status checks every second: the jobs here take
# seconds, and the defaults wait 10 to 40 s.
CORES = ("--cores", "2")
SLURM_PROFILE = ("--profile", str(PROFILES / "slurm"), *CORES, "--slurm-init-seconds-before-status-checks", "1",
                 "--seconds-between-status-checks", "1",
                 # no slurmdbd here, so sacct, the plugin's default, fails (and the plugin then hangs)
                 "--slurm-status-command", "squeue")
GENERIC_PROFILE = ("--profile", str(PROFILES / "cluster-generic"), *CORES, "--seconds-between-status-checks", "1")
# With 2 CPUs, the 4 evaluations run two at a time: half the CPUs and memory, twice the time.
ASKED = {**SUBMITTED, "evaluate_evaluate_arm": "--cpus-per-task=2 --mem=4096 --time=80"}


@pytest.fixture(scope="module")
def slurm():
    reason = real_slurm.unavailable() or real_slurm.install()
    if reason:
        pytest.skip(reason)
    try:
        cluster = real_slurm.Slurm()
    except BlockingIOError:
        pytest.skip(f"another run of this test has its Slurm up on this machine ({real_slurm.LOCK} is locked)")
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> tuple[Path, str]:
    """One git corpus for every work directory here: a run records its corpus's location, so the
    runs compared must share it."""
    path, first, _ = make_two_commit_repo(tmp_path_factory.mktemp("slurm-real") / "repo")
    return path, first


def start(work: Path, *args: str, env: dict | None = None) -> subprocess.Popen:
    """A Snakemake run in the background, in a process group of its own (see `end`)."""
    cmd = ["timeout", "-k", "10", str(RUN_TIMEOUT), *snakemake_cmd(work), *args,
           "--configfile", str(work / "config.yaml")]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                            start_new_session=True)


def finish(proc: subprocess.Popen) -> tuple[int, str]:
    try:
        out, _ = proc.communicate(timeout=RUN_TIMEOUT + 30)
    finally:
        end(proc)
    return proc.returncode, out


def end(proc: subprocess.Popen) -> None:
    """Kills a run a failed test left behind, with what it started on this host."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)


def results(work: Path) -> tuple[dict, dict]:
    """The matrix files as they are, and the run JSONs without their timings."""
    matrix = {p.name: p.read_bytes() for p in sorted((work / "results/matrix").glob("phase-matrix.*"))}
    assert sorted(matrix) == ["phase-matrix.json", "phase-matrix.md"]
    return matrix, runs(work)


@pytest.fixture(scope="module")
def reference(repo, tmp_path_factory):
    """The tiny matrix run on this host; it starts at once, so it overlaps the cluster's start.
    Call it for its results."""
    work, _ = write_matrix(tmp_path_factory.mktemp("slurm-real-local") / "work", *repo)
    proc = start(work, "--cores", "2", "all")
    done = []

    def outcome() -> tuple[dict, dict]:
        if not done:
            code, out = finish(proc)
            assert code == 0, out[-3000:]
            done.append(results(work))
        return done[0]

    yield outcome
    end(proc)


def megabytes(size: str) -> int:
    """scontrol's memory ("300M", "1G") in MB."""
    return int(size[:-1]) * {"M": 1, "G": 1024, "T": 1024 * 1024}[size[-1]]


def minutes(limit: str) -> int:
    """scontrol's time limit ("00:20:00", "1-00:00:00") in minutes."""
    days, _, clock = limit.rpartition("-")
    hours, mins, _ = clock.split(":")
    return int(days or 0) * 24 * 60 + int(hours) * 60 + int(mins)


def asked(job: dict) -> str:
    """What Slurm holds for a job, in the sbatch flags of test_cluster's SUBMITTED."""
    return (f"--cpus-per-task={job['CPUs/Task']} --mem={megabytes(job['MinMemoryNode'])} "
            f"--time={minutes(job['TimeLimit'])}")


def reported(out: str, name: str) -> bool:
    """Snakemake's error for a group job (`name`: the group's, then its rules): `Error in group
    <group>`, then the rule of each of its jobs. It gives no Slurm job id: the status script does."""
    group, rules = name.split("_", 1)[0], sorted(dict(GROUPS)[name])
    error = re.search(rf"^    message: Error in group {group}\n    jobs:\n((?:        .*\n)+)", out, flags=re.M)
    return error is not None and sorted(re.findall(r"^        rule (\w+):$", error.group(1), flags=re.M)) == rules


def test_the_matrix_runs_through_the_slurm_profile(reference, slurm, repo, tmp_path):
    work, _ = write_matrix(tmp_path / "work", *repo)
    code, out = finish(start(work, *SLURM_PROFILE, "all", env=slurm.env))
    assert code == 0, out[-3000:]
    assert results(work) == reference()

    # Snakemake ran the local rules itself and submitted the rest in their groups; Slurm had
    # exactly those group jobs, 5 for 10 jobs
    assert job_counts(out) == {**{("rule", r): n for r, n in REMOTE.items()},
                               **{("localrule", r): n for r, n in LOCAL.items()}}
    assert group_jobs(out) == GROUPS
    jobs = slurm.jobs(work)
    # the plugin names a job by its run and a group job in the comment: rule_<group>_<rules>
    names = [job["Comment"].removeprefix("rule_") for job in jobs]
    assert sorted(names) == GROUP_JOBS
    assert {(name, asked(job)) for name, job in zip(names, jobs, strict=True)} == set(ASKED.items())
    # the short jobs on the short partition, as the profile's set-resources says
    assert {(job["JobState"], job["Partition"]) for job in jobs} == {("COMPLETED", "short")}


def test_a_job_cancelled_on_slurm_fails_the_run_and_the_rerun_finishes_it(reference, slurm, repo, tmp_path):
    work, _ = write_matrix(tmp_path / "work", *repo)
    proc = start(work, *GENERIC_PROFILE, "all", env=slurm.env)
    try:
        deadline = time.monotonic() + RUN_TIMEOUT
        while not (running := [job for job in slurm.jobs(work) if job["JobState"] == "RUNNING"]):
            assert proc.poll() is None, f"the run ended before any job ran on Slurm:\n{proc.stdout.read()[-3000:]}"
            assert time.monotonic() < deadline, f"no job ran on Slurm in {RUN_TIMEOUT} s"
            time.sleep(0.3)
        victim = running[0]
        job_id, name = victim["JobId"], victim["JobName"].removeprefix("crmatrix-")
        assert subprocess.run(["scancel", job_id], env=slurm.env, timeout=30).returncode == 0
        code, out = finish(proc)
    finally:
        end(proc)
    assert code != 0
    # Snakemake's error names the group and its rules; the status script the Slurm job, its state and reason
    assert reported(out, name), out[-3000:]
    assert f"status-sacct.sh: Slurm job {job_id} (crmatrix-{name}) ended CANCELLED, reason None" in out.splitlines()

    # the recovery: the same command again (the profile has rerun-incomplete, as `make resume` does)
    code, out = finish(start(work, *GENERIC_PROFILE, "all", env=slurm.env))
    assert code == 0, out[-3000:]
    assert results(work) == reference()
    jobs = slurm.jobs(work)
    assert [job["JobId"] for job in jobs if job["JobState"] != "COMPLETED"] == [job_id]
    assert sorted(job["JobName"].removeprefix("crmatrix-") for job in jobs if job["JobState"] == "COMPLETED") \
        == GROUP_JOBS
    assert {(job["JobName"].removeprefix("crmatrix-"), asked(job)) for job in jobs} == set(ASKED.items())
    assert {job["Partition"] for job in jobs} == {"main"}  # sbatch without -p: the default partition


def test_a_job_over_its_memory_is_reported_with_slurms_state_and_reason(slurm, repo, tmp_path):
    work, _ = write_matrix(tmp_path / "work", *repo)
    # 50 MB, where a job's Snakemake and script took over 200 MB (killed asking for 200 MB, not for
    # 300). The target first: --set-resources takes every word after it.
    code, out = finish(start(work, *GENERIC_PROFILE, "results/symbols/pathc.jsonl",
                             "--set-resources", "extract_symbols:mem_mb=50", env=slurm.env))
    assert code != 0
    [job] = slurm.jobs(work)
    job_id = job["JobId"]
    # without cgroups Slurm 22.05 says neither OUT_OF_MEMORY nor OutOfMemory: the job step is killed
    # (signal 9) and the job FAILED, reason JobLaunchFailure
    assert (job["JobName"], job["MinMemoryNode"], job["JobState"], job["Reason"], job["ExitCode"]) == \
        ("crmatrix-symbols_extract_symbols", "50M", "FAILED", "JobLaunchFailure", "0:9")
    line = (f"status-sacct.sh: Slurm job {job_id} (crmatrix-symbols_extract_symbols) ended FAILED, "
            "reason JobLaunchFailure")
    assert line in out.splitlines(), out[-3000:]
    assert reported(out, "symbols_extract_symbols")
    assert "Exceeded job memory limit" in (work / f"logs/cluster/{job_id}.log").read_text()
    assert not (work / "results/symbols/pathc.jsonl").exists()
