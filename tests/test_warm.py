"""The warm start of light jobs (crmatrix.pipeline.warm): a job run through the client and the
server behaves as the plain `python SCRIPT ARGS` would (argv, streams, directory, environment,
exit status, signals), yet starts with its modules imported; a job the server cannot take runs
plainly."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from crmatrix.pipeline.warm import client, server, starter, wire

# A job that says whether its top-level import was loaded before it ran (warm) and echoes what it
# was handed; `exit N`: that status; `sleep FILE`: writes its pid to FILE and sleeps.
SCRIPT = """\
import sys
from crmatrix.pipeline.warm import client

client.hand_over()
WARM = "decimal" in sys.modules
import decimal
import os

what = sys.argv[1]
print("warm" if WARM else "cold", sys.argv[1:], os.getcwd(), os.environ.get("JOB_VAR"), sep="|")
print("to stderr", file=sys.stderr)
if what == "exit":
    sys.exit(int(sys.argv[2]))
if what == "message":
    sys.exit("a message")
if what == "raise":
    raise ValueError("boom")
if what == "sleep":
    open(sys.argv[2], "w").write(str(os.getpid()))
    import time
    time.sleep(60)
if what == "umask":
    print(oct(os.umask(0)))
"""


@pytest.fixture
def warm(tmp_path, monkeypatch):
    """A started server for SCRIPT, stopped after the test; yields (script, the job env, the
    server, its log)."""
    script = tmp_path / "scripts" / "job.py"
    script.parent.mkdir()
    script.write_text(SCRIPT)
    monkeypatch.delenv(starter.SWITCH_VAR, raising=False)
    started = starter.start(True, [script], tmp_path / "logs" / "warm.log")
    # what Snakemake's shell hands a one-thread job: the environment and the thread variables
    env = {**os.environ, **dict.fromkeys(starter.THREAD_VARS, "1")}
    yield script, env, started, tmp_path / "logs" / "warm.log"
    started.stop()


def job(script, env, *args, cwd=None, **kw):
    return subprocess.run([sys.executable, str(script), *args], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=60, **kw)


def wait_for_server(script, env):
    """The server is up once a job is warm (it binds before preloading, so a job never fails)."""
    for _ in range(100):
        if job(script, env, "hello").stdout.startswith("warm"):
            return
        time.sleep(0.1)
    raise AssertionError("no job ran warm")


def test_a_job_runs_warm_and_as_its_plain_self(warm, tmp_path):
    script, env, _, _ = warm
    wait_for_server(script, env)
    env = {**env, "JOB_VAR": "x"}  # a variable the server has not: it refuses, so the job runs plainly
    plain = job(script, env, "hello", "a b", cwd=tmp_path)
    assert plain.stdout == f"cold|['hello', 'a b']|{tmp_path}|x\n"
    del env["JOB_VAR"]
    got = job(script, env, "hello", "a b", cwd=tmp_path)
    assert got.returncode == 0
    assert got.stdout == f"warm|['hello', 'a b']|{tmp_path}|None\n"
    assert got.stderr == "to stderr\n"


def test_exit_statuses_are_the_plain_interpreters(warm):
    script, env, _, _ = warm
    wait_for_server(script, env)
    assert job(script, env, "exit", "3").returncode == 3
    assert job(script, env, "exit", "0").returncode == 0
    message = job(script, env, "message")
    assert (message.returncode, message.stderr) == (1, "to stderr\na message\n")
    raised = job(script, env, "raise")
    assert raised.returncode == 1
    assert raised.stderr.startswith("to stderr\nTraceback (most recent call last):\n")
    assert raised.stderr.endswith("ValueError: boom\n")


def test_the_umask_and_a_closed_stdin_reach_the_job(warm):
    script, env, _, _ = warm
    wait_for_server(script, env)
    got = job(script, env, "umask", preexec_fn=lambda: os.umask(0o027), stdin=subprocess.DEVNULL)
    assert got.stdout.splitlines()[1] == "0o27"


def test_a_job_with_another_environment_runs_plainly_and_the_log_says_why(warm):
    script, env, _, log = warm
    wait_for_server(script, env)
    got = job(script, {**env, "OMP_NUM_THREADS": "2"}, "hello")
    assert got.stdout.startswith("cold|")
    assert f"warm: {script} runs plainly: its environment differs in OMP_NUM_THREADS\n" in log.read_text()


def test_without_a_server_the_job_runs_plainly(warm):
    script, env, started, _ = warm
    assert env[client.SOCKET_VAR]
    assert started.stop() in (0, -signal.SIGTERM)  # SIGTERM before its handler: a server not serving yet
    assert job(script, env, "hello").stdout.startswith("cold|['hello']")  # its socket named, none there


def test_a_signal_to_the_client_reaches_the_job(warm, tmp_path):
    proc, worker = sleeping_job(*warm[:2], tmp_path / "pid")
    assert worker != proc.pid  # the job is the server's process, not the client
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(30) == -signal.SIGTERM
    assert not _alive(worker)


def test_a_client_killed_outright_takes_its_job_with_it(warm, tmp_path):
    proc, worker = sleeping_job(*warm[:2], tmp_path / "pid")
    proc.kill()
    proc.wait(30)
    for _ in range(100):
        if not _alive(worker):
            break
        time.sleep(0.1)
    assert not _alive(worker)


def test_stopping_restores_the_variable_and_leaves_no_file(tmp_path, monkeypatch):
    monkeypatch.delenv(starter.SWITCH_VAR, raising=False)
    monkeypatch.setenv(client.SOCKET_VAR, "before")
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    started = starter.start(True, [], tmp_path / "logs" / "warm.log")
    assert os.environ[client.SOCKET_VAR].startswith("crmatrix-warm-")
    assert started.stop() in (0, -signal.SIGTERM)
    assert os.environ[client.SOCKET_VAR] == "before"
    assert [p.name for p in tmp_path.iterdir()] == ["logs"]  # an abstract socket: no file, even if killed


def test_no_server_for_a_cluster_run_or_when_switched_off(tmp_path, monkeypatch):
    assert starter.start(False, [], tmp_path / "warm.log") is None
    monkeypatch.setenv(starter.SWITCH_VAR, "0")
    assert starter.start(True, [], tmp_path / "warm.log") is None
    assert not (tmp_path / "warm.log").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="connecting as another user needs root")
def test_another_users_process_is_refused(warm):
    script, env, _, log = warm
    wait_for_server(script, env)
    pid = os.fork()
    if pid == 0:  # as nobody, whose connection the abstract socket's lack of permissions lets in
        refused = 1
        try:
            os.setuid(65534)
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.connect(wire.address(env[client.SOCKET_VAR]))
                wire.send_request(sock, [str(script), "hello"], env, "/", 0o022)
                refused = 0 if wire.read_int(sock) is None else 1
        except OSError:  # closed while the request was sent
            refused = 0
        finally:
            os._exit(refused)
    assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
    assert "warm: a connection from user 65534 refused\n" in log.read_text()


def test_refusal_names_each_variable_that_differs_but_the_per_job_ones():
    base = {"A": "1", "PATH": "/bin", "TMPDIR": "/tmp"}
    assert server.refusal({**base, "TMPDIR": "/scratch", "SHLVL": "2", "_": "/x"}, base) == []
    assert server.refusal({"PATH": "/usr/bin", "B": "2", "TMPDIR": "/tmp"}, base) == ["A", "B", "PATH"]


@pytest.mark.parametrize(("code", "status", "printed"), [
    (None, 0, ""), (0, 0, ""), (3, 3, ""), (256 + 7, 7, ""), ("why", 1, "why\n")])
def test_exit_code_is_the_interpreters(code, status, printed, capsys):
    assert server.exit_code(SystemExit(code)) == status
    assert capsys.readouterr().err == printed


def test_preload_imports_a_scripts_top_level_modules(tmp_path):
    script = tmp_path / "s.py"
    script.write_text("import json\nfrom crmatrix.pipeline import shell_job\nfrom os import sep, path\n"
                      "def f():\n    import this_is_not_imported\n")
    assert server.preload([str(script)]) == ["json", "crmatrix.pipeline", "crmatrix.pipeline.shell_job",
                                             "os", "os.path"]  # a name, then a submodule


def _gate(path: Path) -> str:
    """A module whose import waits for `path` to exist (30 s at most)."""
    return (f"import os, time\nfor _ in range(300):\n    if os.path.exists({str(path)!r}):\n        break\n"
            "    time.sleep(0.1)\n")


def test_a_job_is_served_between_preloads_not_after_them(tmp_path, monkeypatch):
    """A job handed over while the server preloads runs once the script being loaded is in, not
    after every script listed: the next script's import here waits for the job to have run (its
    exit status reaches its client once the server is back from that import)."""
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    (scripts / "gate_go.py").write_text(_gate(tmp_path / "go"))
    (scripts / "gate_done.py").write_text(_gate(tmp_path / "done"))
    (scripts / "job.py").write_text("from crmatrix.pipeline.warm import client\n\nclient.hand_over()\n"
                                    "import sys\n\nimport gate_go\n\n"
                                    "open(sys.argv[1], 'w').write('served' if client.IN_SERVER else 'plain')\n")
    (scripts / "later.py").write_text("import gate_done\n")
    monkeypatch.delenv(starter.SWITCH_VAR, raising=False)
    started = starter.start(True, [scripts / "job.py", scripts / "later.py"], tmp_path / "warm.log")
    env = {**os.environ, **dict.fromkeys(starter.THREAD_VARS, "1")}
    try:
        for _ in range(100):  # bound (abstract sockets are listed with a leading @)
            if f"@{env[client.SOCKET_VAR]}" in Path("/proc/net/unix").read_text():
                break
            time.sleep(0.1)
        ran = tmp_path / "ran"
        proc = subprocess.Popen([sys.executable, str(scripts / "job.py"), str(ran)], env=env)
        time.sleep(3)  # its client has connected, and waits while job.py's imports load
        (tmp_path / "go").touch()
        for _ in range(200):  # long before later.py's import (30 s) would give up
            if ran.exists() and ran.read_text():
                break
            time.sleep(0.1)
        assert ran.read_text() == "served"
        (tmp_path / "done").touch()
        assert proc.wait(60) == 0
    finally:
        (tmp_path / "done").touch()
        started.stop()


def sleeping_job(script, env, pid_file: Path) -> tuple[subprocess.Popen, int]:
    """A warm job that sleeps: its client, and the pid of the process running it."""
    wait_for_server(script, env)
    proc = subprocess.Popen([sys.executable, str(script), "sleep", str(pid_file)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return proc, _pid(pid_file)


def _pid(path: Path) -> int:
    for _ in range(300):
        if path.exists() and path.read_text():
            return int(path.read_text())
        time.sleep(0.05)
    raise AssertionError(f"{path}: no pid written")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie the server has not reaped yet is no running job
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):  # gone as it was read
        return False
