"""BM25 of many commits from one tokenization: raw term counts per distinct content, and each
commit's BM25 computed from them with that commit's own statistics.

A plain index (`crmatrix.engine.bm25`) stores bm25s's finished scores, which depend on the
whole corpus: the number of documents N, each term's document frequency and the average
document length. Those change from one commit to the next even where a document does not, so
a versioned index stores what does not change — each distinct content's term counts and its
length (tokenized once, with the plain index's `Tokenizer`) — and a commit's view
(`TermCounts.commit`) scores a query with the commit's N, document frequencies over its
occurrences and average length over them.

The scores are bitwise those of `BM25Index.build(<the commit's symbols>).scores(query)`,
because each step is bm25s's (0.3, `bm25s.scoring`, method "lucene") in its own types and
order: the average length is `np.mean` of the documents' lengths (int64), exact in float64;
a term's idf is `math.log(1 + (N - df + 0.5) / (df + 0.5))` in Python floats, stored as
float32; its weight in a document is `tf / (k1 * ((1 - b) + b * len / avg) + tf)` with tf
float32 and the denominator float64 (the type NumPy gives a float64 scalar plus a float32
array: float64 under NumPy 2's promotion, float32 under NumPy 1's — taken from NumPy itself,
`_WEIGHT`), times the float32 idf, rounded to float32; and a query sums its terms' weights
into float32 scores term by term in query order, as `BM25Index.scores` does. Every step is
elementwise IEEE arithmetic, which vectorizing does not change (no reassociation, no fused
multiply-add across NumPy calls).

On disk (a directory): `tokenizer.json`, `params.json` (k1, b and the variant, from bm25s),
`lengths.npy` (int32, one per text) and `terms/`, the term counts as `crmatrix.versions.index.postings`.
"""

from __future__ import annotations

import itertools
import math
import re
from array import array
from collections import Counter, defaultdict
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from crmatrix import CrmatrixError, atomic
from crmatrix.engine.bm25 import IDENTIFIER, SCORED_METHOD, TOKENIZER, Tokenizer
from crmatrix.engine.knobs import Knobs
from crmatrix.versions.grown import Grown
from crmatrix.versions.index import postings

PARAMS = "params.json"
LENGTHS = "lengths.npy"
TERMS = "terms"
_IDENTIFIER_OR_BREAK = re.compile(rf"{IDENTIFIER}|\n")  # the tokenizer's identifiers, and where each line ends
# The type of bm25s's `den + tf_array`, a float64 scalar plus a float32 array.
_WEIGHT = (np.float64(1.0) + np.ones(1, dtype=np.float32)).dtype


def build(texts: Iterable[str], directory: Path, rows: Grown | None = None, base: TermCounts | None = None,
          knobs: Knobs | None = None) -> int:
    """Tokenize every text once, as `knobs` say (None: the defaults), and write the counts into
    `directory` (made here, inside a staged directory of the caller); returns the number of rows
    written. With `rows` (and the `base` whose counts its base rows are, tokenized alike), the
    texts are its new rows' and the rest is the base's counts, gathered."""
    import bm25s  # k1, b and the variant are bm25s's defaults, as in a plain index

    defaults = bm25s.BM25()
    if defaults.method != SCORED_METHOD or defaults.idf_method not in (None, SCORED_METHOD):
        raise CrmatrixError(f"bm25s defaults to variant {defaults.method!r}; the versioned BM25 computes "
                            f"{SCORED_METHOD!r} only")
    tokenizer = Tokenizer(Tokenizer.settings(knobs))
    counted, lengths = _counted(texts, tokenizer)
    rows = rows or Grown.fresh(len(lengths))
    if rows.new != len(lengths) or (base is None) != (rows.base == 0):
        raise CrmatrixError(f"term counts: {len(lengths)} new texts for {rows.new} new rows, "
                            f"{'a' if base else 'no'} base for {rows.base} base rows")
    parts, new_lengths = [counted], lengths.astype(np.int32)
    base_lengths = np.zeros(0, dtype=np.int32)
    at_base, at_new = rows.renumbering()
    if base is not None:
        if base._tokenize.conf != tokenizer.conf:
            raise CrmatrixError(f"term counts: the base was tokenized as {base._tokenize.conf}, not as "
                                f"{tokenizer.conf}")
        parts, base_lengths = [base._terms.part().renumbered(at_base), parts[0]], np.asarray(base._lengths)
    directory = Path(directory)
    postings.save([*parts[:-1], parts[-1].renumbered(at_new)], directory / TERMS)
    np.save(directory / LENGTHS, rows.take(base_lengths, new_lengths).astype(np.int32))
    atomic.write_json(directory / TOKENIZER, tokenizer.conf)
    atomic.write_json(directory / PARAMS, {"k1": defaults.k1, "b": defaults.b, "method": defaults.method,
                                           "dtype": str(np.dtype(defaults.dtype))})
    return len(rows)


def _counted(texts: Iterable[str], tokenizer: Tokenizer) -> tuple[postings.Part, np.ndarray]:
    """Each text's term counts (items numbered in the order the texts came) and its length in
    tokens. A text's tokens are its identifiers' (`Tokenizer`), and no identifier crosses a line
    break, so the counts are a product of sparse counts: texts x distinct lines (a file's versions
    share most of their lines), lines x distinct identifiers (every line's found in one pass of
    the pattern over them all), identifiers x terms (each spelled once). The tokenizing, text by
    text, was most of a repository's index build."""
    line_id: defaultdict[str, int] = defaultdict(itertools.count().__next__)  # a new line: the next id
    item, line, count = array("q"), array("q"), array("q")  # each text's lines, how often each
    n = 0
    for n, text in enumerate(texts, 1):
        held = Counter(map(line_id.__getitem__, text.split("\n")))
        item.extend(itertools.repeat(n - 1, len(held)))
        line.extend(held)
        count.extend(held.values())
    lines = list(line_id)
    in_text = _summed(np.frombuffer(item, np.int64), np.frombuffer(line, np.int64), (n, len(lines)),
                      np.frombuffer(count, np.int64))
    ident_id: defaultdict[str, int] = defaultdict(itertools.count().__next__)
    ident_id["\n"]  # id 0: a line's end
    found = _IDENTIFIER_OR_BREAK.findall("\n".join(lines))
    ids = np.fromiter(map(ident_id.__getitem__, found), np.int64, len(found))
    ends = ids == 0
    identifiers = list(ident_id)[1:]
    in_line = _summed(np.cumsum(ends)[~ends], ids[~ends] - 1, (len(lines), len(identifiers)))
    spelled = tokenizer.identifiers(identifiers)
    term_id: defaultdict[str, int] = defaultdict(itertools.count().__next__)
    terms = np.fromiter(map(term_id.__getitem__, itertools.chain.from_iterable(spelled)), np.int64)
    spelling = np.fromiter(map(len, spelled), np.int64, len(spelled))
    in_identifier = _summed(np.repeat(np.arange(len(identifiers)), spelling), terms, (len(identifiers), len(term_id)))
    counts = (in_text @ (in_line @ in_identifier)).tocoo()
    return (postings.Part(list(term_id), counts.col.astype(np.int64), counts.row.astype(np.int64),
                          counts.data.astype(np.int32)),
            in_text @ (in_line @ spelling))


def _summed(rows: np.ndarray, cols: np.ndarray, shape: tuple[int, int], values: np.ndarray | None = None):
    """The sparse matrix of `values` (1s) at (rows, cols), repeats summed."""
    from scipy import sparse  # with bm25s, as in every build

    values = np.ones(len(rows), np.int64) if values is None else values
    return sparse.csr_array((values, (rows, cols)), shape=shape)


class TermCounts:
    """The counts `build` wrote, memory-mapped."""

    def __init__(self, directory: Path, items: int):
        directory = Path(directory)
        try:
            self.params = atomic.read_json(directory / PARAMS)
            self._tokenize = Tokenizer(atomic.read_json(directory / TOKENIZER))
            self._lengths = np.load(directory / LENGTHS, mmap_mode="r")
        except (OSError, ValueError, KeyError) as e:
            raise CrmatrixError(f"{directory}: not readable term counts ({e}); delete the index and run again"
                                ) from None
        self._terms = postings.Postings(directory / TERMS)
        if self.params.get("method") != SCORED_METHOD or np.dtype(self.params.get("dtype")) != np.float32:
            raise CrmatrixError(f"{directory}: BM25 {self.params.get('method')!r} in {self.params.get('dtype')}, "
                                f"expected {SCORED_METHOD!r} in float32; delete the index and run again")
        if len(self._lengths) != items:
            raise CrmatrixError(f"{directory}: counts of {len(self._lengths)} texts, expected {items}; "
                                "delete the index and run again")

    def commit(self, occurrences: np.ndarray) -> CommitBM25:
        """BM25 over the documents `occurrences` lists (an item id each, repeats allowed), in that order."""
        return CommitBM25(self, np.asarray(occurrences, dtype=np.int64))


class CommitBM25:
    """One commit's BM25: `scores(query)` as a plain `BM25Index` of its documents gives them."""

    def __init__(self, counts: TermCounts, occurrences: np.ndarray):
        self._c = counts
        self.num_docs = len(occurrences)
        self._avg = np.asarray(counts._lengths)[occurrences].astype(np.int64).mean() if self.num_docs else 0.0
        # each item's occurrences: `order[first[i]:first[i] + mult[i]]`
        self._mult = np.bincount(occurrences, minlength=len(counts._lengths))
        self._first = np.cumsum(self._mult) - self._mult
        self._order = np.argsort(occurrences, kind="stable")
        self._norm: np.ndarray | None = None

    def _den(self, items: np.ndarray) -> np.ndarray:
        """bm25s's length normalization `k1 * ((1 - b) + b * len / avg)` of these items: worked out
        once per commit for every item (elementwise, so the same bits as of the items alone), since
        a long query looks up hundreds of terms at one commit."""
        if self._norm is None:
            k1, b = self._c.params["k1"], self._c.params["b"]
            self._norm = (k1 * ((1 - b) + b * np.asarray(self._c._lengths).astype(np.float64) / self._avg)
                          ).astype(_WEIGHT)
        return self._norm[items]

    def _weights(self, term: str) -> tuple[np.ndarray, np.ndarray] | None:
        """(occurrences holding `term`, its float32 weight in each), None when none does."""
        found = self._c._terms.get(term)
        if found is None:
            return None
        items, tf = found
        mult = self._mult[items]
        keep = mult > 0
        if not keep.any():
            return None
        items, mult, tf = items[keep], mult[keep], tf[keep].astype(np.float32)
        df, n = int(mult.sum()), self.num_docs
        idf = np.float32(math.log(1 + (n - df + 0.5) / (df + 0.5)))
        den = self._den(items)
        weight = (np.full(len(items), idf, dtype=np.float32) * (tf / (den + tf))).astype(np.float32)
        if mult.max() == 1:
            return self._order[self._first[items]], weight
        ends = np.cumsum(mult)
        slots = np.repeat(self._first[items] - (ends - mult), mult) + np.arange(ends[-1])
        return self._order[slots], np.repeat(weight, mult)

    def scores(self, query: str) -> np.ndarray:
        """One BM25 score per document, in order (0 where no query term occurs)."""
        scores = np.zeros(self.num_docs, dtype=np.float32)
        weights: dict[str, tuple[np.ndarray, np.ndarray] | None] = {}  # an issue text repeats its words
        for term in self._c._tokenize([query])[0]:
            found = weights[term] = weights[term] if term in weights else self._weights(term)
            if found is not None:
                np.add.at(scores, *found)
        return scores
