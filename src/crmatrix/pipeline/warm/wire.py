"""The wire format of a job's hand-over (`client`) to the warm server (`server`).

The request: a 4-byte length with the job's stdin, stdout and stderr attached (SCM_RIGHTS), then
that many bytes of JSON (argv, environment, working directory, umask). The replies: the pid of
the process running the job (0: refused, run it here), then its exit code as
`os.waitstatus_to_exitcode` gives it (negative: killed by that signal).
"""

from __future__ import annotations

import json
import os
import socket
import struct

STDIO = (0, 1, 2)
_INT = struct.Struct("!i")


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
