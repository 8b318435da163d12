"""Every call into a system under test is bounded: by the query timeout, and by the job's budget.

Python cannot stop a thread, and running an in-process system (builtin, a plugin) in a
subprocess would cost every query a round trip and give up fork-unsafe state (torch,
onnxruntime, open indexes). So each call runs on a worker thread that the job waits for at
most its timeout. A call that overruns is recorded as a timeout and its worker abandoned: a
daemon thread, which never keeps the job's process alive; the next call gets a fresh worker.
Otherwise all calls of a job share one worker, so a system keeping thread-affine state (an
sqlite connection, say) sees a single thread while it behaves.

External systems (command, mcp) enforce their timeout themselves, since only they can kill
their process; for them the guard waits `GRACE_S` longer, as a backstop.

The budget is checked before each call: once spent, the remaining queries are not asked
(recorded as `budget` failures); a call in flight ends at its own timeout.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from crmatrix.systems.answers import QueryFailure

DEFAULT_TIMEOUT_S = 30.0
DEFAULT_BUDGET_S = 1800.0
GRACE_S = 10.0  # > an external system's kill escalation (terminate, wait, kill; the MCP SDK's 2 + 2 s)


class _Worker:
    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        threading.Thread(target=self._run, daemon=True, name="crmatrix-system-call").start()

    def _run(self) -> None:
        while (job := self._jobs.get()) is not None:
            fn, fut = job
            if fut.set_running_or_notify_cancel():
                try:
                    fut.set_result(fn())
                except BaseException as e:
                    fut.set_exception(e)

    def submit(self, fn: Callable[[], Any]) -> Future:
        fut: Future = Future()
        self._jobs.put((fn, fut))
        return fut

    def stop(self) -> None:
        """The thread exits once its current call (if any) returns."""
        self._jobs.put(None)


class Guard:
    def __init__(self, timeout_s: float = DEFAULT_TIMEOUT_S, budget_s: float = DEFAULT_BUDGET_S):
        self.timeout_s = float(timeout_s)
        self.budget_s = float(budget_s)
        self.grace_s = 0.0  # how much longer than its timeout a self-timed system may take (see for_system)
        self._start = time.monotonic()
        self._worker: _Worker | None = None
        self.last_elapsed_s = 0.0  # the last call's own duration, measured on the worker

    def spent(self) -> bool:
        return time.monotonic() - self._start >= self.budget_s

    def remaining_s(self) -> float:
        return max(0.0, self.budget_s - (time.monotonic() - self._start))

    def call(self, fn: Callable[..., Any], *args: Any, timeout_s: float | None = None, what: str = "search") -> Any:
        """`fn(*args)` on the worker, waited for at most `timeout_s` (default: the query timeout)
        plus the grace period. Raises QueryFailure('timeout') on overrun; anything `fn` raises
        is re-raised here."""
        limit = self.timeout_s if timeout_s is None else timeout_s
        wait = limit + self.grace_s
        box = {"elapsed": None}

        def timed():
            t0 = time.perf_counter()
            try:
                return fn(*args)
            finally:
                box["elapsed"] = time.perf_counter() - t0

        if self._worker is None:
            self._worker = _Worker()
        fut = self._worker.submit(timed)
        try:
            result = fut.result(timeout=wait)
        except TimeoutError:
            if fut.done():  # raised by fn itself
                self.last_elapsed_s = box["elapsed"] or 0.0
                raise
            self._worker.stop()
            self._worker = None  # still busy with the hung call: the next call gets a fresh thread
            self.last_elapsed_s = wait
            raise QueryFailure("timeout", f"{what}: no answer within {limit:g} s") from None
        except BaseException:
            self.last_elapsed_s = box["elapsed"] or 0.0
            raise
        self.last_elapsed_s = box["elapsed"]
        return result

    def for_system(self, system) -> None:
        """A self-timed system (`System.SELF_TIMED`) kills its own overrunning process; the guard
        waits a grace period longer (its `grace_s`, or GRACE_S), so that it is the system that reports."""
        if system.SELF_TIMED:
            self.grace_s = float(system.grace_s if system.grace_s is not None else GRACE_S)

    def close(self) -> None:
        if self._worker is not None:
            self._worker.stop()
            self._worker = None
