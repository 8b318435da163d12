"""Words of identifiers: the two rules the builtin engine splits code text by.

A module outside the engine package because datasets split names the same way (the audit's
name overlap, a derived dataset's drop of queries that name their gold) without running the
engine: a stage's code hash follows its imports (crmatrix.codehash), so an engine
edit re-runs no dataset stage.

There are two because the CodeLens mechanisms the engine mirrors use two, and an arm must
mean the same in both engines:

- `words`: an identifier's words, split at `_` and at camel-case humps with acronyms and
  digits kept whole (`parseHTTPResponse` -> parse, HTTP, Response; `utf8_decode` -> utf8,
  decode). It is CodeLens's split for the `(words)` of the embedding-text header; BM25
  (ours, no CodeLens counterpart) splits every identifier of a document with it too.
- `alnum_words`: the lowercase alphanumeric runs of a text, every other character a
  boundary (`_` included) and camel case none: 2e's "found as a whole word". Splitting
  `parseJson` there would count coverage CodeLens does not.

The lexical ranker needs neither: it matches query tokens inside the lowercased name, and
every word of a name is already a part of it.
"""

from __future__ import annotations

import re
from functools import lru_cache

_NON_ALNUM = re.compile(r"[^0-9a-z]+")


@lru_cache(maxsize=1 << 16)  # BM25 splits every identifier of a corpus, and names repeat
def words(name: str) -> tuple[str, ...]:
    """CodeLens's identifier split, case kept: a new word at `_` (dropped), and at an
    uppercase letter that follows a lowercase one or is followed by one."""
    out: list[str] = []
    current = ""
    for i, ch in enumerate(name):
        if ch == "_":
            if current:
                out.append(current)
            current = ""
        elif ch.isupper() and current and (current[-1].islower() or name[i + 1 : i + 2].islower()):
            out.append(current)
            current = ch
        else:
            current += ch
    if current:
        out.append(current)
    return tuple(out)


def alnum_words(text: str) -> list[str]:
    """The lowercase runs of ASCII letters and digits in `text`, in order."""
    return [w for w in _NON_ALNUM.split(text.lower()) if w]
