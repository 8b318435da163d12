"""CodeLens's structural/lexical score of one symbol for one query (ENGINE_KNOBS.md).

Case-insensitive; the first rule that fires wins; a symbol no rule reaches is not a
candidate. Scores are whole numbers as in CodeLens (fractions truncate), and the kind
boost applies to token-scored candidates only: the earlier rules are already decisive.
"""

from __future__ import annotations

import re
from collections.abc import Callable
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
NAME, SIGNATURE, QUALNAME, PATH = range(4)  # LexicalDoc's string fields, as a LexicalIndex's blobs hold them


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

    SEP = "\x00"  # in no string; a needle holding it could match across two (`LexicalIndex._blob`)
    CACHE_SIZE = 1 << 16  # needles: most are words of a long query found nowhere, an empty array each
    CACHE_ROWS = 1 << 23  # the rows their answers hold in all (8 bytes each): a blob a job's commits share is large

    def __init__(self, texts: list[str]):
        self.text = self.SEP.join(texts)
        lengths = np.fromiter((len(t) + 1 for t in texts), dtype=np.int64, count=len(texts))
        self.starts = np.concatenate(([0], np.cumsum(lengths)[:-1])) if len(texts) else np.zeros(0, np.int64)
        self.n = len(texts)
        self._cache: dict[str, np.ndarray] = {}
        self._cached_rows = 0

    @classmethod
    def joined(cls, text: str, starts: np.ndarray) -> Blob:
        """The blob of strings already joined with SEP, the i-th starting at `starts[i]` (as
        `crmatrix.versions.index.columns.Column.joined` reads them)."""
        blob = cls.__new__(cls)
        blob.text, blob.starts, blob.n = text, np.asarray(starts, dtype=np.int64), len(starts)
        blob._cache, blob._cached_rows = {}, 0
        return blob

    def holders(self, needle: str) -> np.ndarray:
        """The strings that contain `needle`, ascending (read-only, cached: queries share their
        small words, and a versioned index's commits share one blob, `LexicalIndex.of_parts`)."""
        rows = self._cache.get(needle)
        if rows is None:
            rows = self._scan(needle)
            if len(self._cache) >= self.CACHE_SIZE or self._cached_rows + len(rows) > self.CACHE_ROWS:
                self._cache.clear()
                self._cached_rows = 0
            self._cache[needle] = rows
            self._cached_rows += len(rows)
            rows.flags.writeable = False
        return rows

    def _scan(self, needle: str) -> np.ndarray:
        hits, find, pos = [], self.text.find, 0
        while needle and (pos := find(needle, pos)) != -1:
            hits.append(pos)
            pos += 1
        return np.unique(np.searchsorted(self.starts, np.asarray(hits, dtype=np.int64), side="right") - 1)


class SuffixBlob(Blob):
    """A `Blob` looked up through its suffix array (libdivsufsort's, from `pydivsufsort`): a needle
    is two binary searches of the sorted suffixes, not a scan of the whole text. A versioned
    index's blobs are searched for hundreds of words of each long issue text: 70k of the 87k
    needles of SWE-bench's 600 tasks were found nowhere, each a full scan. The array is built
    over the text's UTF-8 bytes (surrogates passed through), in which a needle's bytes occur only
    where the needle does: each character's bytes start with a byte that begins no other's."""

    def __init__(self, texts: list[str]):
        from pydivsufsort import divsufsort

        super().__init__(texts)
        self._bytes = self.text.encode("utf-8", "surrogatepass")
        lengths = np.fromiter((len(t.encode("utf-8", "surrogatepass")) + 1 for t in texts), np.int64, len(texts))
        self._byte_starts = np.concatenate(([0], np.cumsum(lengths)[:-1])) if len(texts) else np.zeros(0, np.int64)
        self._suffixes = divsufsort(self._bytes) if self._bytes else np.zeros(0, np.int64)

    def _scan(self, needle: str) -> np.ndarray:
        key = needle.encode("utf-8", "surrogatepass")
        data, suffixes, m = self._bytes, self._suffixes, len(key)
        if not key:
            return np.zeros(0, np.int64)
        lo, hi = 0, len(suffixes)
        while lo < hi:  # the first suffix not below the needle
            mid = (lo + hi) // 2
            lo, hi = (mid + 1, hi) if data[suffixes[mid]:suffixes[mid] + m] < key else (lo, mid)
        first, hi = lo, len(suffixes)
        while lo < hi:  # the first past those that start with it
            mid = (lo + hi) // 2
            lo, hi = (mid + 1, hi) if data[suffixes[mid]:suffixes[mid] + m] == key else (lo, mid)
        at = np.asarray(suffixes[first:lo], dtype=np.int64)
        return np.unique(np.searchsorted(self._byte_starts, at, side="right") - 1)


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
        self._fill(Names(names), (Blob(names), Blob([d.signature for d in docs]), Blob([d.qualname for d in docs]),
                                  Blob([d.path for d in docs])),
                   np.array([d.kind in FUNCTION_KINDS for d in docs], dtype=bool),
                   np.array([d.kind in TYPE_KINDS for d in docs], dtype=bool), None, None)

    @classmethod
    def of_parts(cls, names: Names, blobs: tuple[Blob, Blob, Blob, Blob], rows: tuple[np.ndarray, ...],
                 is_function: np.ndarray, is_type: np.ndarray, own: Callable[[], tuple[Blob, Blob, Blob, Blob]]
                 ) -> LexicalIndex:
        """The index of symbols given as the parts it is made of: their `LexicalDoc`s' names; blobs
        of names, signatures, qualified names and paths (lowercased), in which symbol i's is string
        `rows[field][i]` (a versioned index's blobs hold each distinct string once and are shared
        by every commit's index, so a needle is scanned once for them all, in less text); whether
        each kind is a function's or a type's. `own`: the symbols' own blobs, in their order, for a
        needle a match of which could span two strings: that depends on their order (made at the
        first such needle)."""
        index = cls.__new__(cls)
        index._fill(names, blobs, is_function, is_type, tuple(np.asarray(r, dtype=np.int64) for r in rows), own)
        return index

    def _fill(self, names: Names, blobs: tuple[Blob, Blob, Blob, Blob], is_function: np.ndarray,
              is_type: np.ndarray, rows: tuple[np.ndarray, ...] | None,
              own: Callable[[], tuple[Blob, ...]] | None) -> None:
        self.n = blobs[0].n if rows is None else len(rows[0])
        self.named = names
        self._blobs, self._rows, self._make_own = blobs, rows, own
        self._own: tuple[Blob, ...] | None = None
        self.is_function, self.is_type = is_function, is_type

    def _blob(self, field: int, needles: tuple[str, ...]) -> tuple[Blob, np.ndarray | None]:
        """The blob `needles` are looked for in (`field`: name, signature, qualname, path) and each
        symbol's string in it (None: the i-th)."""
        if self._rows is not None and any(Blob.SEP in t for t in needles):
            if self._own is None:
                self._own = self._make_own()
            return self._own[field], None
        return self._blobs[field], None if self._rows is None else self._rows[field]

    def _contains(self, field: int, needle: str) -> np.ndarray:
        """Which symbols' `field` contains `needle`."""
        blob, rows = self._blob(field, (needle,))
        mask = np.zeros(blob.n, dtype=bool)
        mask[blob.holders(needle)] = True
        return mask if rows is None else mask[rows]

    def _hits(self, field: int, needles: tuple[str, ...]) -> np.ndarray:
        """How many of `needles` (each time it is listed) each symbol's `field` contains."""
        blob, rows = self._blob(field, needles)
        counts = np.bincount(np.concatenate([blob.holders(t) for t in needles]), minlength=blob.n)
        return counts if rows is None else counts[rows]

    def _named(self, names) -> np.ndarray:
        mask = np.zeros(self.n, dtype=bool)
        for name in names:
            mask[self.named.rows(name)] = True
        return mask

    def _names_within(self, snake: str) -> np.ndarray:
        """Symbols whose (underscored) name occurs in `snake`. A name of three characters or more
        that occurs there begins with one of `snake`'s trigrams: a set lookup rules most names out
        before the search of a long issue text's snake form."""
        grams = {snake[i:i + 3] for i in range(len(snake) - 2)}
        return self._named([name for name in self.named.underscored
                            if (name[:3] in grams or len(name) < 3) and name in snake])

    def scores(self, query: str) -> np.ndarray:
        """One score per symbol, NaN where the symbol is not a candidate."""
        q = LexicalQuery.of(query)
        out = np.full(self.n, np.nan)
        if not q.text:
            return out
        free = np.ones(self.n, dtype=bool)
        for mask, value in (
            (lambda: self._named([q.text]), 100),
            (lambda: self._contains(NAME, q.text), 60),
            (lambda: self._contains(SIGNATURE, q.text), 30),
            (lambda: self._contains(QUALNAME, q.text), 20),
            (lambda: self._named([q.snake]), 80),
            (lambda: self._names_within(q.snake), 70),
            (lambda: self._contains(NAME, q.snake) if "_" in q.snake else np.zeros(self.n, bool), 65),
        ):
            fire = mask() & free
            out[fire] = value
            free &= ~fire
        if q.tokens and free.any():
            self._token_scores(q, free, out)
        return out

    def _token_scores(self, q: LexicalQuery, free: np.ndarray, out: np.ndarray) -> None:
        n_tok = len(q.tokens)
        name_hits, sig_hits, path_hits = (self._hits(f, q.tokens) for f in (NAME, SIGNATURE, PATH))
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
