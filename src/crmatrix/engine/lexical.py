"""CodeLens's structural/lexical score of one symbol for one query (ENGINE_KNOBS.md).

Case-insensitive; the first rule that fires wins; a symbol no rule reaches is not a
candidate. Scores are whole numbers as in CodeLens (fractions truncate), and the kind
boost applies to token-scored candidates only: the earlier rules are already decisive.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from crmatrix.symbols import Symbol

# Queries holding one of these ask for something that *does* a thing: favour functions.
ACTION_VERBS = frozenset(
    "find get search detect start run read write move change rename replace extract route embed build "
    "create delete update compute calculate apply handle parse index watch listen fetch send load save "
    "open close connect check validate verify transform convert process execute call invoke inline "
    "refactor analyze import export".split()
)
FUNCTION_KINDS = frozenset({"function", "method"})
TYPE_KINDS = frozenset({"class", "interface", "enum"})
_TOKEN_SPLIT = re.compile(r"[\s_\-]+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


def camel_words(name: str) -> tuple[str, ...]:
    """`FileWatcher` -> (file, watcher); `getHTTPResponse` -> (get, http, response)."""
    return tuple(w.lower() for part in re.split(r"[_\-]+", name) for w in _CAMEL.findall(part))


@dataclass(frozen=True)
class LexicalQuery:
    text: str      # lowercased, stripped
    snake: str     # whitespace and dashes turned into `_`
    tokens: tuple  # split on whitespace/_/-, >= 2 chars
    has_verb: bool

    @classmethod
    def of(cls, query: str) -> "LexicalQuery":
        text = query.strip().lower()
        tokens = tuple(t for t in _TOKEN_SPLIT.split(text) if len(t) >= 2)
        return cls(text, re.sub(r"[\s\-]", "_", text), tokens, any(t in ACTION_VERBS for t in tokens))


@dataclass(frozen=True)
class LexicalDoc:
    """The lowercased fields of a symbol that the rules look at, computed once per index."""

    name: str
    signature: str
    qualname: str
    path: str
    kind: str
    words: tuple

    @classmethod
    def of(cls, s: Symbol) -> "LexicalDoc":
        return cls(s.name.lower(), s.signature.lower(), s.qualname.lower(), s.path.lower(), s.kind,
                   camel_words(s.name))


def _token_score(d: LexicalDoc, q: LexicalQuery) -> int | None:
    n = len(q.tokens)
    name_hits = sum(t in d.name or t in d.words for t in q.tokens)
    sig_hits = sum(t in d.signature for t in q.tokens)
    path_hits = sum(t in d.path for t in q.tokens)
    if name_hits:
        base = min(int(15 + 40 * name_hits / n) + int(5 * sig_hits / n), 55)
    elif sig_hits:
        base = int(5 + 20 * sig_hits / n)
    elif path_hits:
        base = int(max(1 + 4 * path_hits / n, 1))
    else:
        return None
    if q.has_verb:
        return base + (8 if d.kind in FUNCTION_KINDS else 0)
    return base + (5 if d.kind in TYPE_KINDS else 0)


def score(d: LexicalDoc, q: LexicalQuery) -> int | None:
    """The lexical score, or None when the symbol is not a candidate."""
    if not q.text:
        return None
    if d.name == q.text:
        return 100
    if q.text in d.name:
        return 60
    if q.text in d.signature:
        return 30
    if q.text in d.qualname:
        return 20
    if d.name == q.snake:
        return 80
    if "_" in d.name and d.name in q.snake:
        return 70
    if "_" in q.snake and q.snake in d.name:
        return 65
    if not q.tokens:
        return None
    return _token_score(d, q)
