"""CodeLens's structural/lexical score of one symbol for one query (ENGINE_KNOBS.md).

Case-insensitive; the first rule that fires wins; a symbol no rule reaches is not a
candidate. Scores are whole numbers as in CodeLens (fractions truncate), and the kind
boost applies to token-scored candidates only: the earlier rules are already decisive.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

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


@dataclass(frozen=True)
class LexicalQuery:
    text: str      # lowercased, stripped
    snake: str     # whitespace and dashes turned into `_`
    tokens: tuple  # split on whitespace/_/-, >= 2 chars
    has_verb: bool

    @classmethod
    def of(cls, query: str) -> LexicalQuery:
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

    @classmethod
    def of(cls, s: Symbol) -> LexicalDoc:
        return cls(s.name.lower(), s.signature.lower(), s.qualname.lower(), s.path.lower(), s.kind)


def _token_score(d: LexicalDoc, q: LexicalQuery) -> int | None:
    n = len(q.tokens)
    # Inside the lowercased name: a token equal to one of the name's words is in it too.
    name_hits = sum(t in d.name for t in q.tokens)
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


class Blob:
    """Many lowercased strings in one, so "which of them contain x" is a C-speed `str.find` scan."""

    SEP = "\x00"  # never in a query, so no match spans two strings
    CACHE_SIZE = 1024

    def __init__(self, texts: list[str]):
        self.text = self.SEP.join(texts)
        lengths = np.fromiter((len(t) + 1 for t in texts), dtype=np.int64, count=len(texts))
        self.starts = np.concatenate(([0], np.cumsum(lengths)[:-1])) if len(texts) else np.zeros(0, np.int64)
        self.n = len(texts)
        self._cache: dict[str, np.ndarray] = {}

    @classmethod
    def joined(cls, text: str, starts: np.ndarray) -> Blob:
        """The blob of strings already joined with SEP, the i-th starting at `starts[i]` (as
        `crmatrix.versions.index.columns.Column.joined` reads them)."""
        blob = cls.__new__(cls)
        blob.text, blob.starts, blob.n, blob._cache = text, np.asarray(starts, dtype=np.int64), len(starts), {}
        return blob

    def contains(self, needle: str) -> np.ndarray:
        """Which strings contain `needle` (a read-only mask, cached: queries share their small words)."""
        mask = self._cache.get(needle)
        if mask is None:
            if len(self._cache) >= self.CACHE_SIZE:
                self._cache.clear()
            mask = self._cache[needle] = self._scan(needle)
            mask.flags.writeable = False
        return mask

    def _scan(self, needle: str) -> np.ndarray:
        hits, find, pos = [], self.text.find, 0
        while needle and (pos := find(needle, pos)) != -1:
            hits.append(pos)
            pos += 1
        return self.owners(hits)

    def owners(self, positions: list[int]) -> np.ndarray:
        """The mask of strings that hold these positions of the joined text."""
        mask = np.zeros(self.n, dtype=bool)
        if positions:
            mask[np.searchsorted(self.starts, np.asarray(positions), side="right") - 1] = True
        return mask


class Names:
    """Which symbols bear each (lowercased) name, and the names that hold `_` (sorted): what
    the rules on whole names (100, 80, 70) look up."""

    def __init__(self, names: list[str]):
        self._rows: dict[str, list[int]] = {}
        for i, name in enumerate(names):
            self._rows.setdefault(name, []).append(i)
        self.underscored = sorted({name for name in names if "_" in name})

    def rows(self, name: str):
        """The symbols named `name` (a list, or an array of them)."""
        return self._rows.get(name, [])


class LexicalIndex:
    """All symbols scored at once by the rules of `score`, which stays the readable definition.

    Each rule becomes a boolean mask over symbols; the first rule that fires wins, exactly as
    in `score` (the tests check the two agree on real corpora).
    """

    def __init__(self, symbols: list[Symbol]):
        docs = [LexicalDoc.of(s) for s in symbols]
        names = [d.name for d in docs]
        self._fill(Names(names), Blob(names), Blob([d.signature for d in docs]), Blob([d.qualname for d in docs]),
                   Blob([d.path for d in docs]), np.array([d.kind in FUNCTION_KINDS for d in docs], dtype=bool),
                   np.array([d.kind in TYPE_KINDS for d in docs], dtype=bool))

    @classmethod
    def of_parts(cls, names: Names, name_blob: Blob, signatures: Blob, qualnames: Blob, paths: Blob,
                 is_function: np.ndarray, is_type: np.ndarray) -> LexicalIndex:
        """The index of symbols given as the parts it is made of: their `LexicalDoc`s' names,
        blobs of their names, signatures, qualified names and paths (lowercased), and whether
        each kind is a function's or a type's — what a versioned index stores per content and
        gathers per commit."""
        index = cls.__new__(cls)
        index._fill(names, name_blob, signatures, qualnames, paths, is_function, is_type)
        return index

    def _fill(self, names: Names, name_blob: Blob, signatures: Blob, qualnames: Blob, paths: Blob,
              is_function: np.ndarray, is_type: np.ndarray) -> None:
        self.n = name_blob.n
        self.named = names
        self.names, self.sigs, self.quals, self.paths = name_blob, signatures, qualnames, paths
        self.is_function, self.is_type = is_function, is_type

    def _named(self, names) -> np.ndarray:
        mask = np.zeros(self.n, dtype=bool)
        for name in names:
            mask[self.named.rows(name)] = True
        return mask

    def _names_within(self, snake: str) -> np.ndarray:
        """Symbols whose (underscored) name occurs in `snake`."""
        return self._named([name for name in self.named.underscored if name in snake])

    def scores(self, query: str) -> np.ndarray:
        """One score per symbol, NaN where the symbol is not a candidate."""
        q = LexicalQuery.of(query)
        out = np.full(self.n, np.nan)
        if not q.text:
            return out
        free = np.ones(self.n, dtype=bool)
        for mask, value in (
            (lambda: self._named([q.text]), 100),
            (lambda: self.names.contains(q.text), 60),
            (lambda: self.sigs.contains(q.text), 30),
            (lambda: self.quals.contains(q.text), 20),
            (lambda: self._named([q.snake]), 80),
            (lambda: self._names_within(q.snake), 70),
            (lambda: self.names.contains(q.snake) if "_" in q.snake else np.zeros(self.n, bool), 65),
        ):
            fire = mask() & free
            out[fire] = value
            free &= ~fire
        if q.tokens and free.any():
            self._token_scores(q, free, out)
        return out

    def _token_scores(self, q: LexicalQuery, free: np.ndarray, out: np.ndarray) -> None:
        n_tok = len(q.tokens)
        name_hits = np.zeros(self.n, dtype=np.int64)
        sig_hits = np.zeros(self.n, dtype=np.int64)
        path_hits = np.zeros(self.n, dtype=np.int64)
        for t in q.tokens:
            name_hits += self.names.contains(t)
            sig_hits += self.sigs.contains(t)
            path_hits += self.paths.contains(t)
        # int() truncation of these non-negative values is floor
        base = np.where(
            name_hits > 0,
            np.minimum(np.floor(15 + 40 * name_hits / n_tok) + np.floor(5 * sig_hits / n_tok), 55),
            np.where(sig_hits > 0, np.floor(5 + 20 * sig_hits / n_tok),
                     np.floor(np.maximum(1 + 4 * path_hits / n_tok, 1))),
        )
        boost = np.where(self.is_function, 8, 0) if q.has_verb else np.where(self.is_type, 5, 0)
        scored = free & ((name_hits > 0) | (sig_hits > 0) | (path_hits > 0))
        out[scored] = base[scored] + boost[scored]
