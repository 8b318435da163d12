"""CodeLens's structural/lexical score of one symbol for one query (ENGINE_KNOBS.md).

Case-insensitive; the first rule that fires wins; a symbol no rule reaches is not a candidate.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from crmatrix.symbols import Symbol

# Queries holding one of these ask for something that *does* a thing: favour functions.
ACTION_VERBS = frozenset(
    "find get build parse create make read write load save send handle run check validate compute "
    "convert resolve render set add remove delete update open close fetch merge match apply start "
    "stop register format encode decode serialize extract generate search filter sort map emit "
    "dispatch call invoke init initialize prepare process".split()
)
FUNCTION_KINDS = frozenset({"function", "method"})
TYPE_KINDS = frozenset({"class", "interface", "enum", "struct", "trait"})
_TOKEN_SPLIT = re.compile(r"[\s_\-]+")


@dataclass(frozen=True)
class LexicalQuery:
    text: str      # lowercased, stripped
    snake: str     # spaces and dashes turned into `_`
    tokens: tuple  # split on space/_/-, >= 2 chars
    has_verb: bool

    @classmethod
    def of(cls, query: str) -> "LexicalQuery":
        text = query.strip().lower()
        tokens = tuple(t for t in _TOKEN_SPLIT.split(text) if len(t) >= 2)
        return cls(text, re.sub(r"[\s\-]+", "_", text), tokens, any(t in ACTION_VERBS for t in tokens))


@dataclass(frozen=True)
class LexicalDoc:
    """The lowercased fields of a symbol that the rules look at, computed once per index."""

    name: str
    signature: str
    qualname: str
    path: str
    kind: str

    @classmethod
    def of(cls, s: Symbol) -> "LexicalDoc":
        return cls(s.name.lower(), s.signature.lower(), s.qualname.lower(), s.path.lower(), s.kind)


def _rule_score(d: LexicalDoc, q: LexicalQuery) -> float | None:
    if not q.text:
        return None
    if d.name == q.text:
        return 100.0
    if q.text in d.name:
        return 60.0
    if q.text in d.signature:
        return 30.0
    if q.text in d.qualname:
        return 20.0
    if d.name == q.snake:
        return 80.0
    if "_" in d.name and d.name in q.snake:
        return 70.0
    if "_" in q.snake and q.snake in d.name:
        return 65.0
    if not q.tokens:
        return None
    n = len(q.tokens)
    name_ratio = sum(t in d.name for t in q.tokens) / n
    sig_ratio = sum(t in d.signature for t in q.tokens) / n
    if name_ratio:
        return min(15 + 40 * name_ratio + 5 * sig_ratio, 55.0)
    if sig_ratio:
        return 5 + 20 * sig_ratio
    path_ratio = sum(t in d.path for t in q.tokens) / n
    if path_ratio:
        return max(1 + 4 * path_ratio, 1.0)
    return None


def score(d: LexicalDoc, q: LexicalQuery) -> float | None:
    """The rule score plus the kind boost, or None when the symbol is not a candidate."""
    s = _rule_score(d, q)
    if s is None:
        return None
    if d.kind in FUNCTION_KINDS and q.has_verb:
        s += 8
    elif d.kind in TYPE_KINDS:
        s += 5
    return s
