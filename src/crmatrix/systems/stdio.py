"""An MCP server's process and its stdio pipes, as the streams an MCP client session reads
and writes (the SDK's `stdio_client`, but with the process in our hands).

The server leads a process group of its own (a new session), like every tool we start
(crmatrix.systems.processes). Two things follow from holding the process:

- its death is seen when it happens: a watcher polls its exit status, and once it has
  exited, kills what is left of its group (a child of the server may still hold stdout, and
  its output would then never end) and ends the session's input, so a call in flight fails
  at once, and `Server.exit_status` says how the server ended;
- at shutdown the whole group goes, also when the server itself exits politely on its
  closed stdin and leaves its children running (they would be orphans of the job).
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TextIO

EXIT_WAIT_S = 2.0  # for the server to exit on its own once its stdin is closed (the MCP spec's shutdown)
TERM_WAIT_S = 2.0  # between SIGTERM and SIGKILL to its group
POLL_S = 0.02


class Server:
    """The running server as the session's user sees it: its pid and, once it has exited, its status."""

    def __init__(self, process):
        self.process = process
        self.pid = process.pid

    @property
    def exit_status(self) -> int | None:
        return self.process.returncode

    def kill_group(self, sig: int = signal.SIGKILL) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, sig)

    async def wait_exit(self, timeout_s: float) -> bool:
        """Whether the server has exited within `timeout_s` (polled: waiting on the process
        would also wait for its pipes, which a child of it may hold)."""
        import anyio

        with anyio.move_on_after(timeout_s):
            while self.process.returncode is None:
                await anyio.sleep(POLL_S)
        return self.process.returncode is not None


@contextlib.asynccontextmanager
async def connect(argv: list[str], env: dict[str, str], cwd: Path, errlog: TextIO) -> AsyncIterator[tuple]:
    """(read stream, write stream, Server); leaving stops the server and its whole group."""
    import anyio
    import mcp_types
    from anyio.streams.text import TextReceiveStream
    from mcp.shared.message import SessionMessage

    process = await anyio.open_process(argv, env=env, cwd=str(cwd), stderr=errlog, start_new_session=True)
    server = Server(process)
    to_session, read_stream = anyio.create_memory_object_stream(0)
    write_stream, from_session = anyio.create_memory_object_stream(0)

    async def read(scope: anyio.CancelScope) -> None:
        with scope:
            async with to_session:
                buffer = ""
                with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                    async for chunk in TextReceiveStream(process.stdout, errors="replace"):
                        *lines, buffer = (buffer + chunk).split("\n")
                        for line in filter(str.strip, lines):
                            try:
                                message = SessionMessage(mcp_types.jsonrpc_message_adapter.validate_json(
                                    line, by_name=False))
                            except ValueError as e:  # the session reports it
                                message = e
                            await to_session.send(message)

    async def write() -> None:
        async with from_session:
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                async for message in from_session:
                    text = message.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                    await process.stdin.send(text.encode())

    async def watch(reading: anyio.CancelScope) -> None:
        while process.returncode is None:
            await anyio.sleep(POLL_S)
        server.kill_group()  # its children die with it, and their hold on stdout
        reading.cancel()  # and if one escaped the group, the session's input ends anyway

    async with anyio.create_task_group() as tg:
        reading = anyio.CancelScope()
        tg.start_soon(read, reading)
        tg.start_soon(write)
        tg.start_soon(watch, reading)
        try:
            yield read_stream, write_stream, server
        finally:
            with anyio.CancelScope(shield=True):
                await _stop(server)
                for stream in (read_stream, write_stream):
                    await stream.aclose()
            tg.cancel_scope.cancel()


async def _stop(server: Server) -> None:
    """Close its stdin and give it EXIT_WAIT_S to exit, then SIGTERM and SIGKILL to its group;
    SIGKILL to the group in any case, for the children a server that exited left behind."""
    import anyio

    with contextlib.suppress(Exception):
        await server.process.stdin.aclose()
    if not await server.wait_exit(EXIT_WAIT_S):
        server.kill_group(signal.SIGTERM)
        await server.wait_exit(TERM_WAIT_S)
    server.kill_group(signal.SIGKILL)
    with anyio.move_on_after(TERM_WAIT_S), contextlib.suppress(Exception):
        await server.process.aclose()  # reaps it, and closes its pipes
