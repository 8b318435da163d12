"""`make run` as a user types it, in a copy of the project: a dry run says it ran nothing, and a
`make run` (or `make resume`) that meets a lock tells a live run (naming its PID) from a killed one,
a killed one not yet reaped (a zombie) too."""

import os
import signal
import subprocess
import time
from pathlib import Path

import psutil
import pytest
import yaml
from test_recovery import checkout, finish, make

FINISHED = ("crmatrix: the matrix is in", "crmatrix: the charts are in", "crmatrix: the report is")


def test_a_dry_run_shows_the_plan_and_says_nothing_ran(tmp_path):
    work = checkout(tmp_path)
    code, out = finish(make(work, "run", "SNAKEFLAGS=-n"))
    assert code == 0, out
    assert "This was a dry-run" in out and "crmatrix: a dry run: the plan is above; nothing was run" in out.splitlines()
    assert not [line for line in out.splitlines() if line.startswith(FINISHED)], out
    assert not (work / "results").exists()


def state(pid: int) -> str:
    """The process's state letter (R, S, Z, ...): the field after its name's closing parenthesis."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1][0]


def test_make_resume_takes_a_lock_owner_killed_but_not_yet_reaped_for_gone(tmp_path):
    # kill -0 succeeds on a zombie: a snakemake killed by kill -9 is one until it is reaped (~1 s)
    work = checkout(tmp_path)
    zombie = subprocess.Popen(["true"])  # exits at once; a zombie until this test waits for it
    try:
        deadline = time.monotonic() + 60
        while state(zombie.pid) != "Z":
            assert time.monotonic() < deadline, "true never exited"
            time.sleep(0.01)
        (work / ".snakemake/locks").mkdir(parents=True)
        (work / ".snakemake/locks/crmatrix-owner.pid").write_text(f"{zombie.pid}\n")
        code, out = finish(make(work, "resume", "SNAKEFLAGS=-n"))
        assert state(zombie.pid) == "Z"  # still one while make looked
    finally:
        zombie.wait(timeout=60)
    assert code == 0, out
    assert "a run is going on in this directory" not in out
    assert "crmatrix: a dry run: the plan is above; nothing was run" in out.splitlines()
    assert not (work / ".snakemake/locks/crmatrix-owner.pid").exists()  # unlocked: the lock's directory went


@pytest.mark.slow
def test_a_lock_held_by_a_live_run_names_its_pid_and_a_killed_ones_says_make_resume(tmp_path):
    work = checkout(tmp_path / "work")
    started = tmp_path / "index-started"  # outside the project: no part of the system's keys
    cfg = yaml.safe_load((work / "tiny.yaml").read_text())
    cfg["systems"] = {"slow": {"type": "command", "options": {
        # an index job that takes its time: the first run holds the lock while it sleeps
        "index": ["sh", "-c", 'echo $$ > "$0" && exec sleep 600', str(started)],
        "search": ["sh", "-c", "true", "{query}"], "hits": "hits[]"}, "arms": ["baseline"]}}
    cfg["headline_method"] = "search"
    (work / "live.yaml").write_text(yaml.safe_dump(cfg))

    first = make(work, "run", config="live.yaml", start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        while not started.exists() or not started.read_text().strip():
            assert first.poll() is None, f"the first run ended before its index job:\n{first.stdout.read()}"
            assert time.monotonic() < deadline, "the index job never started"
            time.sleep(0.1)
        owner = int((work / ".snakemake/locks/crmatrix-owner.pid").read_text())
        running = {p.pid: p for p in psutil.Process(first.pid).children(recursive=True)}
        assert owner in running and "snakemake" in " ".join(running[owner].cmdline())

        code, out = finish(make(work, "run", config="live.yaml"))
        assert code != 0
        assert (f"crmatrix: another run is going on in this directory (snakemake, PID {owner}) and holds the lock "
                f"in .snakemake/locks: let it finish, or stop it (kill {owner}) and then: make resume "
                "CONFIG=live.yaml") in out.splitlines(), out
        code, out = finish(make(work, "resume", config="live.yaml"))
        assert code != 0 and (f"crmatrix: a run is going on in this directory (snakemake, PID {owner}): make resume "
                              "would unlock it and start a second run beside it; let it finish, or stop it "
                              f"(kill {owner}) first") in out.splitlines(), out
        assert first.poll() is None  # the live run was left alone
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(timeout=60)
        if started.exists():
            os.kill(int(started.read_text()), signal.SIGKILL)  # the index command: its own process group

    code, out = finish(make(work, "run", config="live.yaml"))
    assert code != 0
    assert (f"crmatrix: an earlier run was killed (its snakemake, PID {owner}, is gone) and left its lock in "
            ".snakemake/locks; recover with: make resume CONFIG=live.yaml") in out.splitlines(), out
