"""A light script's hand-over to the run's warm server (crmatrix.pipeline.warm). It imports what
a socket needs (`wire`) only when there is a server to hand over to: a job of a cluster run, or
of a run with no server, pays nothing but this module's own few imports.
"""

from __future__ import annotations

import os
import signal
import sys

# the server's name in Linux's abstract socket namespace (no file to leave behind), without the
# leading NUL, which no environment variable can hold
SOCKET_VAR = "CRMATRIX_WARM_SOCKET"
# the signals a job in a terminal or under Snakemake is sent: passed on to the job's process
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)

# True in the server and every job it forks: a script they run hands nothing over
IN_SERVER = False


def hand_over() -> None:
    """Have the warm server run this process's script (sys.argv), with its environment,
    directory, umask and standard streams, and exit as that job does. Return when there is no
    server or it refuses the job: the script then runs here, plainly."""
    if IN_SERVER or not os.environ.get(SOCKET_VAR):
        return
    import socket

    from crmatrix.pipeline.warm.wire import address, read_int, send_request

    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(address(os.environ[SOCKET_VAR]))
        umask = os.umask(0)
        os.umask(umask)
        send_request(sock, sys.argv, dict(os.environ), os.getcwd(), umask)
        pid = read_int(sock)
    except OSError:  # the server is gone, or went before it forked: nothing of the job ran yet
        pid = None
    if not pid:
        sock.close()
        return

    def forward(sig, _frame):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:  # it has just ended: its status is on its way
            pass

    for sig in FORWARDED:
        signal.signal(sig, forward)
    code = read_int(sock)
    if code is None:
        sys.stderr.write(f"crmatrix: the warm server ended before {sys.argv[0]} did (its process {pid})\n")
        sys.stderr.flush()
        os._exit(1)
    if code < 0:  # killed by a signal: end the same way, so the shell sees what it would have
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    os._exit(code if code >= 0 else 128 - code)
