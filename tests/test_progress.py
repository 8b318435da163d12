"""Progress of long steps: a line every interval in a log, a bar redrawn in place on a terminal,
nothing at all for a step shorter than one interval."""

import io

from crmatrix.progress import Progress


class Clock:
    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_a_log_gets_a_line_every_interval_and_a_last_one():
    log, clock = io.StringIO(), Clock()
    with Progress("embedding", 1000, "texts", stream=log, clock=clock, interval_s=5) as p:
        for _ in range(10):
            clock.t += 1
            p.advance(100)
    assert log.getvalue().splitlines() == [
        "crmatrix: embedding: 500 texts of 1000 texts (50%), 100.0/s, 5 s left",
        "crmatrix: embedding: 1000 texts of 1000 texts (100%), 100.0/s, 0 s left",
        "crmatrix: embedding: 1000 texts in 10.0 s",
    ]


def test_a_short_step_writes_nothing():
    log, clock = io.StringIO(), Clock()
    with Progress("parsing", 3, "files", stream=log, clock=clock) as p:
        for _ in range(3):
            clock.t += 0.1
            p.advance()
    assert log.getvalue() == ""


def test_a_terminal_gets_a_bar_redrawn_in_place():
    tty, clock = Terminal(), Clock()
    p = Progress("downloading x.tar.gz", 4 * 1024 * 1024, "bytes", stream=tty, clock=clock)
    clock.t += 1
    p.advance(1024 * 1024)
    clock.t += 1
    p.advance(3 * 1024 * 1024)
    p.close()
    assert tty.getvalue() == (
        "\r\033[K[######..................] crmatrix: downloading x.tar.gz: 1.0 MiB of 4.0 MiB (25%), "
        "1.0 MiB/s, 3 s left"
        "\r\033[K[########################] crmatrix: downloading x.tar.gz: 4.0 MiB of 4.0 MiB (100%), "
        "2.0 MiB/s, 0 s left"
        "\r\033[K[########################] crmatrix: downloading x.tar.gz: 4.0 MiB in 2.0 s\n")


def test_an_unknown_total_counts_up():
    log, clock = io.StringIO(), Clock()
    p = Progress("querying", None, "queries", stream=log, clock=clock, interval_s=1)
    clock.t += 2
    p.advance(7)
    assert log.getvalue() == "crmatrix: querying: 7 queries, 3.5/s\n"
