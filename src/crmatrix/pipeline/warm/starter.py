"""Starting a local run's warm server (crmatrix.pipeline.warm) from the Snakefile's onstart, and
stopping it as Snakemake exits."""

from __future__ import annotations

import atexit
import os
import secrets
import signal
import subprocess
import sys
from pathlib import Path

from crmatrix.pipeline.warm import client

# Set to 0, a local run starts its light jobs plainly: each its own interpreter, which Snakemake's
# benchmark files then measure whole (under the server they hold a job's wall time, but the CPU
# and memory of its hand-over alone).
SWITCH_VAR = "CRMATRIX_WARM"
# What Snakemake's shell sets to a job's threads: the server's are a one-thread job's, as the
# light rules declare (a job with more is refused, and runs plainly).
THREAD_VARS = ("OMP_NUM_THREADS", "GOTO_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
               "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")
STOP_WAIT_S = 60


class Started:
    """A running server: its process, and the value its socket's variable had before."""

    def __init__(self, process: subprocess.Popen, replaced: str | None):
        self.process, self.replaced = process, replaced

    def stop(self) -> int:
        """Stop the server once its running jobs end (a minute at most), and restore the variable.
        Its exit status: 0, or -SIGTERM if it was stopped while it started."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(STOP_WAIT_S)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.replaced is None:
            os.environ.pop(client.SOCKET_VAR, None)
        else:
            os.environ[client.SOCKET_VAR] = self.replaced
        return self.process.returncode


def start(local: bool, scripts: list[Path], log: Path) -> Started | None:
    """For a local run (not one `SWITCH_VAR`=0 turns off): a server preloading `scripts`, logging
    to `log`, named to the jobs by `client.SOCKET_VAR`; stopped as this process exits. None when
    there is none."""
    if not local or os.environ.get(SWITCH_VAR, "1") == "0":
        return None
    replaced = os.environ.get(client.SOCKET_VAR)
    os.environ[client.SOCKET_VAR] = f"crmatrix-warm-{os.getpid()}-{secrets.token_hex(8)}"
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "crmatrix.pipeline.warm.server", os.environ[client.SOCKET_VAR],
             *map(str, scripts)],
            env={**os.environ, **dict.fromkeys(THREAD_VARS, "1")}, stdin=subprocess.DEVNULL, stdout=out,
            stderr=subprocess.STDOUT, start_new_session=True)  # Ctrl-C reaches each job through its client
    started = Started(process, replaced)
    atexit.register(started.stop)
    return started
