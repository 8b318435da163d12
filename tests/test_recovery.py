"""`kill -9` of `make run` in the middle of an index job and of the evaluations: the next
`make run` names the one command that recovers, and that command gives the same run JSONs
as a run that was never interrupted (timings and embedding-cache statistics aside). And a
fetch killed in its clone leaves nothing outside results/."""

import json
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
import yaml
from conftest import BIN, ROOT, by_hand, snakemake, snakemake_cmd
from test_index_workflow import B2C, DATASET, OFF, RUST
from test_workflow import matrix  # noqa: F401 (a fixture)

VENV = BIN.parent
CONFIG = {
    "corpora": {"rs": {"path": "rs"}},
    "datasets": {"rs": {"file": "ds.json", "corpus": "rs"}},
    "systems": {"builtin": {"type": "builtin", "methods": ["hybrid", "lexical", "semantic"]}},
    "arms": {"baseline": OFF, "2b2c": B2C, "2e": {**OFF, "CODELENS_RANK_SPARSE_TERM_WEIGHT": "1"}},
    "cache_dir": "results/cache",
}
# Volatile by nature: wall-clock times, how many vectors the cache already held, and the run's
# checksum (of all it holds, the times too).
VOLATILE = {"elapsed_ms", "latency_ms", "prepare_s", "index_embedding", "checksum"}


def checkout(dest: Path) -> Path:
    """The project's tracked files (Makefile, profiles, workflow, ...) plus the tiny matrix."""
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    for rel in filter(None, files.split("\0")):
        if (ROOT / rel).is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, dest / rel)
    for rel, text in RUST.items():
        (dest / "rs" / rel).parent.mkdir(parents=True, exist_ok=True)
        (dest / "rs" / rel).write_text(text)
    (dest / "ds.json").write_text(json.dumps(DATASET))
    (dest / "tiny.yaml").write_text(yaml.safe_dump(CONFIG))
    return dest


def make(work: Path, target: str, *args: str, config: str = "tiny.yaml", **popen) -> subprocess.Popen:
    # -o: the venv is the suite's own; never reinstall it from the copy
    cmd = ["make", "-o", f"{VENV}/.installed", target, f"CONFIG={config}", f"VENV={VENV}", "CORES=2", *args]
    env = {k: v for k, v in os.environ.items() if k not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS")}  # as a user types it
    return subprocess.Popen(cmd, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                            **popen)


def finish(proc: subprocess.Popen) -> tuple[int, str]:
    out, _ = proc.communicate(timeout=600)
    return proc.returncode, out


def strip(obj):
    if isinstance(obj, dict):
        return {k: strip(v) for k, v in obj.items() if k not in VOLATILE}
    if isinstance(obj, list):
        return [strip(v) for v in obj]
    return obj


def runs(work: Path) -> dict:
    return {p.relative_to(work).as_posix(): strip(json.loads(p.read_text()))
            for p in sorted((work / "results/runs").rglob("*.json"))}


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    work = checkout(tmp_path_factory.mktemp("uninterrupted"))
    code, out = finish(make(work, "run"))
    assert code == 0, out
    return runs(work)


def started(work: Path, phase: str) -> bool:
    """A job's log is opened by its script as it starts: from then on the job is under way."""
    logs = work / "logs" / phase
    return logs.is_dir() and any(logs.rglob("*.log"))


@pytest.mark.slow
@pytest.mark.parametrize("phase", [pytest.param("build_index", marks=by_hand), "evaluate_arm"])
def test_kill_9_then_the_named_command_gives_the_same_runs(tmp_path, uninterrupted, phase):
    work = checkout(tmp_path)
    proc = make(work, "run", start_new_session=True)
    deadline = time.monotonic() + 300
    while not started(work, phase):
        assert proc.poll() is None, f"the run ended before any {phase} job started:\n{proc.stdout.read()}"
        assert time.monotonic() < deadline, f"no {phase} job started in 300 s"
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=60)
    assert any((work / ".snakemake/incomplete").iterdir()), "the kill came after the job had finished"

    code, out = finish(make(work, "run"))
    assert code != 0
    assert re.search(r"^crmatrix: an earlier run was killed \(its snakemake, PID \d+, is gone\) and left its lock in "
                     r"\.snakemake/locks; recover with: make resume CONFIG=tiny\.yaml$", out, re.M), out
    code, out = finish(make(work, "resume"))
    assert code == 0, out
    assert runs(work) == uninterrupted
    # nothing half-written survives: no staged temporaries, no incomplete markers
    assert not [p for p in (work / "results").rglob(".*.tmp")]
    assert not any((work / ".snakemake/incomplete").iterdir())


@pytest.mark.slow
def test_a_fetch_killed_mid_clone_leaves_its_scratch_in_results_for_the_next_run_to_remove(matrix, tmp_path):  # noqa: F811
    work, _ = matrix
    # a git that hangs in the clone, as a slow network does, and says when it got there
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "git").write_text(f'#!/bin/sh\ncase " $* " in *" clone "*) touch "$CLONING"; exec sleep 600;; esac\n'
                              f'exec {shutil.which("git")} "$@"\n')
    (fake / "git").chmod(0o755)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "PATH": f"{fake}{os.pathsep}{os.environ['PATH']}", "TMPDIR": str(tmp),
           "CLONING": str(tmp_path / "cloning")}
    target = "results/corpora/gitc/manifest.json"
    proc = subprocess.Popen([*snakemake_cmd(work), "--configfile", str(work / "config.yaml"), "--cores", "1", target],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 300
    while not (tmp_path / "cloning").exists():
        assert proc.poll() is None and time.monotonic() < deadline, "the fetch never reached its clone"
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=60)

    # nothing of the fetch in the temporary directory: what it left is under results/, where the job writes
    assert [p.name for p in tmp.iterdir() if p.name.startswith("crmatrix-")] == []
    (left,) = (work / "results/corpora/gitc").glob(".scratch.tree.*.tmp")
    snakemake(work, "--configfile", str(work / "config.yaml"), "--unlock")
    snakemake(work, "--configfile", str(work / "config.yaml"), "--cores", "1", target)
    assert not left.exists() and (work / target).is_file()
