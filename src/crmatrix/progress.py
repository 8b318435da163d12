"""Progress of the long steps (downloading, parsing, embedding, querying).

On a terminal a bar is redrawn in place; anywhere else (a Snakemake job, whose stderr is its
log) one line is written every few seconds, so a log says what a job is doing while it runs.
A step shorter than one interval writes nothing. The cost per `advance` is an addition and
a clock read; callers advance per chunk or batch, and never inside a timed search.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

INTERVAL_S = 5.0  # between lines in a log
REDRAW_S = 0.2  # between redraws of a bar on a terminal
BAR_WIDTH = 24
MIB = 1024 * 1024


def _amount(n: float, unit: str) -> str:
    return f"{n / MIB:.1f} MiB" if unit == "bytes" else f"{n:g} {unit}"


class Progress:
    def __init__(self, what: str, total: int | None = None, unit: str = "items", stream: TextIO | None = None,
                 clock: Callable[[], float] = time.monotonic, interval_s: float = INTERVAL_S):
        self.what, self.total, self.unit = what, total, unit
        self.stream = stream if stream is not None else sys.stderr
        isatty = getattr(self.stream, "isatty", None)
        self.tty = bool(isatty and isatty())
        self.clock = clock
        self.every = REDRAW_S if self.tty else interval_s
        self.start = clock()
        self.next = self.start + self.every
        self.done = 0
        self.shown = False

    def advance(self, n: int = 1) -> None:
        self.done += n
        now = self.clock()
        if now >= self.next:
            self.next = now + self.every
            self._show(self._status(now))

    def close(self) -> None:
        """A last line, if anything was shown: what was done and how long it took."""
        if self.shown:
            self._show(f"crmatrix: {self.what}: {_amount(self.done, self.unit)} in {self.clock() - self.start:.1f} s",
                       final=True)

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _status(self, now: float) -> str:
        elapsed = now - self.start
        rate = self.done / elapsed if elapsed > 0 else 0.0
        if self.total:
            left = f", {(self.total - self.done) / rate:.0f} s left" if rate else ""
            amount = (f"{_amount(self.done, self.unit)} of {_amount(self.total, self.unit)} "
                      f"({self.done / self.total:.0%})")
        else:
            left, amount = "", _amount(self.done, self.unit)
        per_s = f"{rate / MIB:.1f} MiB/s" if self.unit == "bytes" else f"{rate:.1f}/s"
        return f"crmatrix: {self.what}: {amount}, {per_s}{left}"

    def _show(self, text: str, final: bool = False) -> None:
        if self.tty:
            filled = round(BAR_WIDTH * min(self.done / self.total, 1)) if self.total else 0
            bar = f"[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] " if self.total else ""
            self.stream.write(f"\r\033[K{bar}{text}" + ("\n" if final else ""))
        else:
            self.stream.write(text + "\n")
        self.stream.flush()
        self.shown = True
