"""A light script's hand-over to the run's warm server (crmatrix.pipeline.warm), and the wire
format the two speak. Its imports are the standard library's few that a socket needs, so a job
handed over has spent little more than an interpreter's start.

The request: a 4-byte length with the job's stdin, stdout and stderr attached (SCM_RIGHTS), then
that many bytes of JSON (argv, environment, working directory, umask). The replies: the pid of
the process running the job (0: refused, run it here), then its exit code as
`os.waitstatus_to_exitcode` gives it (negative: killed by that signal).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import sys

# the server's name in Linux's abstract socket namespace (no file to leave behind), without the
# leading NUL, which no environment variable can hold
SOCKET_VAR = "CRMATRIX_WARM_SOCKET"
STDIO = (0, 1, 2)
# the signals a job in a terminal or under Snakemake is sent: passed on to the job's process
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)
_INT = struct.Struct("!i")

# True in the server and every job it forks: a script they run hands nothing over
IN_SERVER = False


def hand_over() -> None:
    """Have the warm server run this process's script (sys.argv), with its environment,
    directory, umask and standard streams, and exit as that job does. Return when there is no
    server or it refuses the job: the script then runs here, plainly."""
    if IN_SERVER or not os.environ.get(SOCKET_VAR):
        return
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


def address(name: str) -> str:
    """The abstract socket address of a server's name."""
    return "\0" + name


def send_request(sock: socket.socket, argv: list[str], env: dict[str, str], cwd: str, umask: int) -> None:
    body = json.dumps({"argv": argv, "env": env, "cwd": cwd, "umask": umask}).encode()
    socket.send_fds(sock, [_INT.pack(len(body))], list(STDIO))
    sock.sendall(body)


def read_request(sock: socket.socket) -> tuple[dict, list[int]]:
    """The request on `sock` and the descriptors it carries (the receiver's to close)."""
    head, fds, _flags, _addr = socket.recv_fds(sock, _INT.size, len(STDIO))
    try:
        head += _exactly(sock, _INT.size - len(head))
        request = json.loads(_exactly(sock, _INT.unpack(head)[0]))
        if len(fds) != len(STDIO):
            raise ValueError(f"{len(fds)} descriptors, not {len(STDIO)}")
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise
    return request, fds


def send_int(sock: socket.socket, value: int) -> None:
    sock.sendall(_INT.pack(value))


def read_int(sock: socket.socket) -> int | None:
    """The next reply, None if the other end closed first."""
    data = _exactly(sock, _INT.size)
    return _INT.unpack(data)[0] if len(data) == _INT.size else None


def _exactly(sock: socket.socket, n: int) -> bytes:
    """`n` bytes from `sock`, fewer only if it closes first."""
    chunks, left = [], n
    while left:
        chunk = sock.recv(left)
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)
