"""Every answer accounted: what a query's answer came to, and why a method's answers named
nothing of the corpus.

A query is a `hit` (a relevant unit among its hits), a `miss`, `empty` (an answer was received
and parsed, and it listed no hit), `unresolved` (it named things, none a symbol or file of the
corpus: a path outside it, a name or line matching nothing), or `failed` (crash, timeout, bad
output, a blank answer, the budget: its `failure`). A run counts `empty` and `unresolved` per
method beside its failures, so a tool that answered nothing is never read as one that searched
and missed; and when they make at least NO_HIT_SHARE of the answers, the run's warning names
the cause the rows show: the tool's own words, paths outside the corpus, a `fields` mapping
matching nothing, a `parser: regex` matching nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from crmatrix.results.run import NAMED_NOTHING, outcome

NO_HIT_SHARE = 0.5  # of a method's answers resolving no hit, from which a run warns and its cell is marked
# What a tool says when it found nothing (its answer's first bytes): its own words are the cause.
NOTHING_FOUND = re.compile(r"\b(?:no|0|zero)\s+(?:results?|matches|hits|symbols?|files?|documents?)\b|"
                           r"\bnot\s+found\b|\bnothing\s+(?:found|matched)\b|\bno\s+match", re.I)
SAID = re.compile(rf'[^"\n]*(?:{NOTHING_FOUND.pattern})[^"\n]*', re.I)  # its words: their line, or their string
QUOTE = 80  # characters of an answer or a path quoted in a cause


def answered(hits: int, relevant: bool, resolves: bool) -> str | None:
    """What an answer without failure records as its `outcome`: "empty" when it listed no hit,
    "unresolved" when none of its hits `resolves` to the corpus, None for a hit or a miss (a
    relevant hit is a hit, resolved or not)."""
    if relevant:
        return None
    if not hits:
        return "empty"
    return None if resolves else "unresolved"


def counts(rows: Sequence) -> dict[str, int]:
    """The rows' answers naming nothing of the corpus, by outcome (NAMED_NOTHING)."""
    found = [outcome(r) for r in rows]
    return {o: found.count(o) for o in NAMED_NOTHING}


def warns(rows: Sequence) -> bool:
    """Whether at least NO_HIT_SHARE of the answers (the queries that did not fail) named
    nothing of the corpus."""
    found = [outcome(r) for r in rows]
    no_hit = sum(o in NAMED_NOTHING for o in found)
    return no_hit > 0 and no_hit >= NO_HIT_SHARE * (len(found) - found.count("failed"))


def _quote(text: str) -> str:
    text = " ".join(text.split())
    return repr(text if len(text) <= QUOTE else text[:QUOTE] + "…")


def _empty_cause(rows: list, options: dict) -> str:
    """Why answers listed no hit: what the tool said, else what crmatrix failed to read in it."""
    excerpts = [r["excerpt"] for r in rows if r.get("excerpt")]
    said = next((m for m in map(SAID.search, excerpts) if m), None)
    if said is not None:
        return f"the tool says it found nothing: {_quote(said.group(0).strip())}"
    if options.get("parser") == "regex":
        first = f" (the first answer starts {_quote(excerpts[0])})" if excerpts else ""
        return f"`parser: regex` matched nothing in the answers{first}; check `pattern`"
    if excerpts:
        return (f"the answers list no hit at `hits` {options.get('hits', '')!r} (the first starts "
                f"{_quote(excerpts[0])})")
    return "the system returned no hits"


def _unresolved_cause(rows: list, outside: set[str], corpus_path: str | None, options: dict) -> str:
    """Why answers named nothing of the corpus: their paths lie outside it, else the names or
    lines the `fields` mapping reads match no symbol."""
    tops = [r["top_candidate"] for r in rows]
    away = [t["path"] for t in tops if t["path"] in outside]
    if away:
        like = f"; a corpus path reads like {corpus_path!r}" if corpus_path else ""
        if not away[0]:
            return f"hits without a path ({len(away)} of {len(rows)} answers)"
        return f"paths outside the corpus, e.g. {_quote(away[0])} ({len(away)} of {len(rows)} answers{like})"
    t = tops[0]
    return (f"the `fields` mapping {options.get('fields', {})!r} matches no symbol in the files named (e.g. "
            f"{t['path']!r}: symbol {t['symbol']!r}, line {t['start_line']})")


def cause(rows: Sequence, outside: set[str], corpus_path: str | None, options: dict) -> str:
    """Why a method's answers named nothing of the corpus, from the more common of its `empty`
    and `unresolved` rows (ties: empty). `outside`: the hit paths of the unresolved answers that
    are no file of the corpus; `corpus_path`: one that is, to compare with; `options`: the
    system's (its `parser`, `hits`, `fields`)."""
    by = {o: [r for r in rows if outcome(r) == o] for o in NAMED_NOTHING}
    if len(by["empty"]) >= len(by["unresolved"]):
        return _empty_cause(by["empty"], options)
    return _unresolved_cause(by["unresolved"], outside, corpus_path, options)
