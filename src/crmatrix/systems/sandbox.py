"""Where and how an external system's process runs: a clean environment, a HOME of its own,
and a timeout that kills the whole process group. (What it sees of its corpus: crmatrix.systems.isolation.)

The environment is built, not inherited: PATH and LANG from the host (with the bin directory
of the system's own virtual environment first, when it has one), HOME (and the XDG
dirs and TMPDIR) inside the system's own directory under `results/`, the offline switches
of the Hugging Face libraries (nothing downloads weights at run time), the host variables
the system's config lists in `pass_env`, the config's `env`, and the arm's variables on
top. Anything else of the host never reaches the system, so a run does not depend on the
machine's shell profile and a tool's caches never leak between systems.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from pathlib import Path

from crmatrix.systems.answers import QueryFailure
from crmatrix.systems.processes import REAP_WAIT_S, stop_group

HOST_VARS = ("PATH", "LANG")
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def home_env(home: Path) -> dict[str, str]:
    dirs = {"HOME": home, "XDG_CACHE_HOME": home / ".cache", "XDG_CONFIG_HOME": home / ".config",
            "XDG_DATA_HOME": home / ".local" / "share", "TMPDIR": home / "tmp"}
    for d in dirs.values():
        d.mkdir(parents=True, exist_ok=True)
    return {k: str(v) for k, v in dirs.items()}


def clean_env(home: Path, pass_env: list[str], fixed: dict[str, str], arm_env: dict[str, str],
              venv: Path | None = None, ceilings: list[Path] = ()) -> dict[str, str]:
    """`venv`: the system's own environment, activated (its bin first on PATH); `ceilings`: the
    directories git run by the system must not look in or above (GIT_CEILING_DIRECTORIES), so
    that from its corpus or its HOME it never finds the project's checkout."""
    env = {k: os.environ[k] for k in HOST_VARS if k in os.environ}
    env.setdefault("LANG", "C.UTF-8")
    if venv is not None:
        env["PATH"] = os.pathsep.join([str(venv / "bin"), env.get("PATH", os.defpath)])
        env["VIRTUAL_ENV"] = str(venv)
    env.update(home_env(Path(home).resolve()))
    env.update(OFFLINE)
    if ceilings:
        env["GIT_CEILING_DIRECTORIES"] = os.pathsep.join(str(c) for c in ceilings)
    env.update({k: os.environ[k] for k in pass_env if k in os.environ})
    env.update(fixed)
    env.update(arm_env)
    return env


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1][:500] if lines else ""


def run(argv: list[str], *, env: dict[str, str], cwd: Path, timeout_s: float, what: str) -> str:
    """The process's stdout; QueryFailure `crash` (cannot start, non-zero exit) or `timeout`."""
    try:
        proc = subprocess.Popen(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True)
    except OSError as e:
        raise QueryFailure("crash", f"{what}: cannot start {argv[0]!r}: {e}") from None
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        # Also when the process exited but a child of its group still holds the pipes open.
        stop_group(proc)
        with contextlib.suppress(subprocess.TimeoutExpired, ValueError):
            proc.communicate(timeout=REAP_WAIT_S)
        raise QueryFailure("timeout", f"{what}: no answer within {timeout_s:g} s") from None
    except BaseException:
        stop_group(proc)
        raise
    # A tool may leave helpers behind in its group (watchers, daemons): they die with the call.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    if proc.returncode != 0:
        # A tool's reason is on stderr, but a script may print it to stdout (git commit's
        # "nothing to commit"): the last line of stdout when stderr has none.
        detail = _last_line(err.decode("utf-8", "replace")) or _last_line(out.decode("utf-8", "replace"))
        raise QueryFailure("crash", f"{what}: exit status {proc.returncode}" + (f": {detail}" if detail else ""))
    return out.decode("utf-8", "replace")
