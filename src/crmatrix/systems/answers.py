"""What a system gives back for one query: ranked hits (with the text an agent would read),
or a failure of a named kind.

The kinds are what a run counts per method, so a matrix cell can say "3 failed (2 timeout,
1 crash)" instead of folding them into misses:

- `crash`: the system raised, exited non-zero, or its server died or reported a tool error;
- `timeout`: no answer within the system's `timeout_s`;
- `bad-output`: an answer that is not JSON, or lacks the configured hit list or fields;
- `empty`: no answer at all (blank output, no content). A well-formed answer listing zero
  hits is not a failure: it is the outcome `empty` (`crmatrix.evaluation.accounting`);
- `budget`: not asked, because the job's `budget_s` was spent.
"""

from __future__ import annotations

from dataclasses import dataclass

from crmatrix.hits import Hit

FAILURE_KINDS = ("crash", "timeout", "bad-output", "empty", "budget")
RANKED, BLOB = "ranked", "blob"  # a system's response kinds (see evaluate: a blob is scored at rank 1 only)
EXCERPT_BYTES = 300  # of an external system's raw answer, kept per query so that a miss can be diagnosed


def excerpt(raw: str) -> str:
    """The first EXCERPT_BYTES bytes of `raw` (UTF-8), a character cut there left out."""
    return raw.encode()[:EXCERPT_BYTES].decode("utf-8", "ignore")


@dataclass(frozen=True)
class Answer:
    """Hits plus the raw text the system answered with, when that is what an agent reads
    (a blob system's composed context); `text` None means the hits themselves are read.
    `excerpt`: the raw answer's first bytes (`excerpt`), for a system that has one. `raw`, the
    whole raw answer, and `answered`, each hit as the tool named it before it was resolved
    against the corpus (aligned with `hits`), are for `crmatrix try` to show: a run keeps
    neither."""

    hits: list[Hit]
    text: str | None = None
    excerpt: str | None = None
    raw: str | None = None
    answered: list[Hit] | None = None


class QueryFailure(Exception):
    """One query's failure, with its kind; the message is recorded in the run."""

    def __init__(self, kind: str, message: str):
        assert kind in FAILURE_KINDS, kind
        super().__init__(message)
        self.kind = kind
