"""`mcp`: any stdio MCP server, asked through `tools/call` on a named tool.

    systems:
      myserver:
        type: mcp
        options:
          server: [my-mcp-server, --root, "{corpus}"]
          setup: [{tool: index_repo, args: {path: "{corpus}"}}]   # optional, after each start
          tool: search_code
          args: {query: "{query}", limit: "{k}"}
          hits: "results[]"
          fields: {symbol: name, path: file, start_line: line}

The result's text content is parsed (`parser`, default json) and mapped to hits like a
command's stdout; `content: structured` maps the structured content instead.

One server per evaluation job, started with the job and kept for all its queries. Once it has
answered `initialize` and run its setup, it is asked for its tools (`tools/list`): a tool the
job would call that it does not list stops the job there, in one line naming its tools: asked
anyway, every query would fail or, worse, parse to no hits and score a miss. A query
that times out, or whose call fails below the tool (the server died: a crash naming its
exit status, seen when the server exits even if a child of it still holds its stdout),
restarts the server before the next query: a server that hung once is not trusted with
another. The server leads a process group of its own (crmatrix.systems.stdio); shutting it
down closes its stdin, then SIGTERM, then SIGKILL to the group, each wait bounded, and the
group is killed in any case, so no child of the server outlives the job. The server sees the
sandbox's environment only.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING, Any

from crmatrix import CrmatrixError, did_you_mean
from crmatrix.systems import stdio, templates
from crmatrix.systems.answers import Answer, QueryFailure
from crmatrix.systems.external import STATIC, ExternalSystem
from crmatrix.systems.guard import GRACE_S
from crmatrix.systems.registry import register

if TYPE_CHECKING:
    import asyncio

SHUTDOWN_S = 10.0  # > stdio's escalation (2 s after stdin closes, 2 s after SIGTERM, 2 s to reap)
EXIT_SEEN_S = 2.0  # how long a failed call waits to see whether the server exited


def _leaf(e: BaseException) -> BaseException:
    """The one exception inside nested exception groups (anyio's task groups wrap what their
    body raises), so a message names the cause, not the group."""
    while isinstance(e, BaseExceptionGroup) and len(e.exceptions) == 1:
        e = e.exceptions[0]
    return e


def _text(result) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", None) == "text")


async def _listed_tools(session) -> list[dict]:
    """The tools the server lists, every page of them: name, description, input schema."""
    from mcp_types import PaginatedRequestParams

    tools, cursor = [], None
    while True:
        page = await session.list_tools(params=PaginatedRequestParams(cursor=cursor) if cursor else None)
        tools += [{"name": t.name, "description": t.description or "", "input_schema": t.input_schema}
                  for t in page.tools]
        if not (cursor := page.next_cursor):
            return tools


class UnlistedTool(CrmatrixError):
    """A tool the job would call that the server does not list; `listed`: the tools it lists
    (as `_listed_tools` gives them), for `crmatrix try` to show."""

    def __init__(self, message: str, listed: list[dict]):
        super().__init__(message)
        self.listed = listed


def _check_tools(wanted: list[str], listed: list[dict]) -> None:
    """A tool the job calls that the server does not list: one line, with the name it may have
    meant and all it lists."""
    names = [t["name"] for t in listed]
    for tool in wanted:
        if tool not in names:
            hint = did_you_mean(tool, names).strip()
            raise UnlistedTool(f"the server lists no tool {tool!r}{f' ({hint})' if hint else ''}; its tools: "
                               f"{', '.join(sorted(names)) or 'none'}", listed)


class _Server:
    """One server and its client session, driven by an event loop in a thread of its own: the
    SDK is async and the System protocol is not, and anyio scopes must be entered and left by
    one task, so a single task holds the session open and serves calls from a queue."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path, errlog: Path, start_timeout_s: float,
                 setup: list[dict], tools: list[str]):
        self._argv, self._env, self._cwd, self._errlog = argv, env, cwd, errlog
        self._start_timeout_s, self._setup, self._tools = start_timeout_s, setup, tools
        import asyncio  # here, not at the top: every evaluation imports this module (the registry's types)

        self._loop = asyncio.new_event_loop()
        self._queue: asyncio.Queue = asyncio.Queue()
        self._ready: Future = Future()
        self.dead = False
        self.listed: list[dict] = []  # its tools, as it listed them once ready
        self._process: stdio.Server | None = None
        self._thread = threading.Thread(target=self._main, daemon=True, name="crmatrix-mcp-client")
        self._thread.start()
        try:
            self.info = self._ready.result(timeout=start_timeout_s + GRACE_S)
        except TimeoutError:  # waiting here ran out, or initialize/setup overran its fail_after
            self.close()
            raise QueryFailure("timeout", f"server: not ready within {start_timeout_s:g} s") from None
        except (QueryFailure, CrmatrixError):
            self.close()
            raise
        except BaseException as e:
            self.close()
            raise QueryFailure("crash", f"server: {type(e).__name__}: {e}") from None

    def _main(self) -> None:
        try:
            self._loop.run_until_complete(self._serve())
        finally:
            self._loop.close()

    async def _serve(self) -> None:
        import anyio
        from mcp import ClientSession

        phase = "start"
        try:
            with open(self._errlog, "a", encoding="utf-8") as errlog:
                async with stdio.connect(self._argv, self._env, self._cwd, errlog) as (read, write, server):
                    self._process = server
                    async with ClientSession(read, write) as session:
                        with anyio.fail_after(self._start_timeout_s):
                            phase = "initialize"
                            info = await self._exited_or(session.initialize(), "before answering initialize")
                            for step in self._setup:
                                phase = f"setup tool {step['tool']}"
                                result = await self._exited_or(session.call_tool(step["tool"], step["args"]),
                                                               f"in {phase}")
                                if result.is_error:
                                    raise QueryFailure("crash", f"{phase}: {_text(result)[:300]}")
                            phase = "tools/list"  # after setup: what the queries will find
                            self.listed = await self._exited_or(_listed_tools(session), "in tools/list")
                            _check_tools(self._tools, self.listed)
                        phase = "ready"
                        self._ready.set_result(info)
                        await self._answer_calls(session)
        except BaseException as e:
            if not self._ready.done():
                self._ready.set_exception(self._start_failure(_leaf(e), phase))
        finally:
            self.dead = True
            while not self._queue.empty():
                if (item := self._queue.get_nowait()) is not None:
                    item[-1].set_exception(QueryFailure("crash", "server: shut down"))

    def _start_failure(self, e: BaseException, phase: str) -> BaseException:
        """Why the server is not ready, in one line: the phase that did not finish in time, or how it
        failed; or that it cannot serve the job (CrmatrixError)."""
        if isinstance(e, (QueryFailure, CrmatrixError)):
            return e
        if isinstance(e, TimeoutError):
            what = "answer initialize" if phase == "initialize" else f"finish {phase}"
            return QueryFailure("timeout", f"server: did not {what} within {self._start_timeout_s:g} s")
        return QueryFailure("crash", f"server: {type(e).__name__}: {e}")

    async def _exited_or(self, call, when: str):
        """`call`'s result; if it fails because the server exited, a crash naming its exit status."""
        try:
            return await call
        except Exception as e:
            status = await self._exit_status()
            if status is None:
                raise
            raise QueryFailure("crash", f"server exited with status {status} {when}") from e

    async def _exit_status(self) -> int | None:
        """The server's exit status, once it has exited (a failed call waits for it a moment:
        the pipe can close before the exit is seen)."""
        server = self._process
        if server is None:
            return None
        await server.wait_exit(EXIT_SEEN_S)
        return server.exit_status

    async def _answer_calls(self, session) -> None:
        """Until told to stop (None), or a call fails below the tool: then the server goes."""
        import anyio

        while (item := await self._queue.get()) is not None:
            tool, args, timeout_s, fut = item
            try:
                with anyio.fail_after(timeout_s):
                    result = await self._exited_or(session.call_tool(tool, args), "during the call")
            except TimeoutError:
                fut.set_exception(QueryFailure("timeout", f"{tool}: no answer within {timeout_s:g} s"))
                return
            except QueryFailure as e:
                fut.set_exception(QueryFailure(e.kind, f"{tool}: {e}"))
                return
            except Exception as e:
                fut.set_exception(QueryFailure("crash", f"{tool}: {type(e).__name__}: {e}"))
                return
            fut.set_result(result)

    def call(self, tool: str, args: Any, timeout_s: float):
        fut: Future = Future()
        try:
            if self.dead:
                raise RuntimeError
            self._loop.call_soon_threadsafe(self._queue.put_nowait, (tool, args, timeout_s, fut))
        except RuntimeError:  # the loop has closed
            raise QueryFailure("crash", "server: not running") from None
        try:
            return fut.result(timeout=timeout_s + GRACE_S)
        except TimeoutError:  # the call's own fail_after answers first; this only backs it up
            raise QueryFailure("timeout", f"{tool}: no answer within {timeout_s:g} s") from None

    def close(self) -> None:
        if self._thread.is_alive():
            try:
                self._loop.call_soon_threadsafe(self._queue.put_nowait, None)
            except RuntimeError:
                pass  # the loop closed meanwhile
            self._thread.join(timeout=SHUTDOWN_S)


@register("mcp")
class McpSystem(ExternalSystem):
    @classmethod
    def argvs(cls, options: dict) -> dict[str, list | None]:
        return {**super().argvs(options), "server": options["server"]}

    @classmethod
    def check_options(cls, options: dict) -> None:
        templates.check("server", options["server"], STATIC)
        for i, step in enumerate(options["setup"]):
            templates.check(f"setup[{i}].args", step["args"], STATIC)
        super().check_options(options)

    def __init__(self, ctx):
        super().__init__(ctx)
        self.argv = templates.fill_argv(self.options["server"], self.values)
        self.setup = [{"tool": s["tool"], "args": templates.fill_args(s["args"], self.values)}
                      for s in self.options["setup"]]
        self.tools = list(dict.fromkeys(self.specs[m]["tool"] for m in ctx.methods or self.specs))
        # the job's own: the query jobs of one index share its HOME, and may run at once
        self.errlog = self.home / f"mcp-server-{os.getpid()}.log"
        self.start_timeout_s = self.options["start_timeout_s"]
        # a failed query may restart the server inside its call: the guard waits for that too
        self.grace_s = GRACE_S + SHUTDOWN_S + self.start_timeout_s
        self.starts = 0
        try:
            self.server: _Server | None = self._start()
        except QueryFailure as e:
            super().close()
            raise CrmatrixError(f"MCP server {self.argv} did not start: {e}{self._stderr_since(0)}") from None
        except CrmatrixError:
            super().close()
            raise

    def _start(self) -> _Server:
        self.starts += 1
        return _Server(self.argv, self.env, self.cwd, self.errlog, self.start_timeout_s, self.setup, self.tools)

    def _log_size(self) -> int:
        return self.errlog.stat().st_size if self.errlog.exists() else 0

    def _stderr_since(self, offset: int) -> str:
        """The server's last stderr line written since `offset`, to name a crash's cause."""
        if not self.errlog.exists():
            return ""
        with open(self.errlog, "rb") as f:
            f.seek(offset)
            lines = [ln.strip() for ln in f.read().decode("utf-8", "replace").splitlines() if ln.strip()]
        return f"; server stderr: {lines[-1][:300]}" if lines else ""

    def search(self, query: str, method: str, k: int) -> Answer:
        if self.server is None:  # the restart after the previous failure did not succeed: try again
            self.server = self._start()
        values = self.call_values(method, query, k)
        offset = self._log_size()
        try:
            result = self.server.call(values["tool"], values["args"], self.ctx.timeout_s)
        except QueryFailure as f:
            message = f"{f}{self._stderr_since(offset) if f.kind == 'crash' else ''}"
            self._restart()
            raise QueryFailure(f.kind, message) from None
        if result.is_error:
            raise QueryFailure("crash", f"{values['tool']}: tool error: {_text(result).strip()[:300] or '(no text)'}")
        text = _text(result)
        if self.options["content"] == "structured":
            if result.structured_content is None:
                raise QueryFailure("empty", f"{values['tool']}: no structured content")
            return self.answer(result.structured_content, text, k)
        return self.answer(self.parse(text), text, k)

    def listed_tools(self) -> list[dict]:
        return list(self.server.listed) if self.server is not None else []

    def _restart(self) -> None:
        self.server.close()
        self.server = None
        try:
            self.server = self._start()
        except QueryFailure:
            pass  # the next query tries again, and fails with the cause if it persists

    def provenance(self) -> dict:
        out = {**super().provenance(), "server_starts": self.starts}
        info = getattr(self.server, "info", None)
        if info is not None:
            out["server"] = {"name": info.server_info.name, "version": info.server_info.version,
                             "protocol_version": info.protocol_version}
        return out

    def close(self) -> None:
        if self.server is not None:
            self.server.close()
            self.server = None
        super().close()
