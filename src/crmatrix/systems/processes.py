"""Process groups: a tool we start leads a group of its own (start_new_session), and
stopping it stops the whole group, so no helper it spawned outlives the call."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess

TERM_WAIT_S = 2.0  # between SIGTERM and SIGKILL to the group
REAP_WAIT_S = 2.0


def stop_group(proc: subprocess.Popen) -> None:
    """SIGTERM to the process group we started, SIGKILL if it is still there after
    TERM_WAIT_S. The group id is our child's pid (start_new_session), so nothing else is hit."""
    for sig, wait in ((signal.SIGTERM, TERM_WAIT_S), (signal.SIGKILL, REAP_WAIT_S)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=wait)
            if sig == signal.SIGTERM:  # the leader is gone; its group's stragglers get no grace
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
            return
        except subprocess.TimeoutExpired:
            continue
