"""BM25 over symbols: one tokenizer, stemmer and stopword list for corpus and queries.

Identifiers are split (`parseHTTPResponse`, `load_config` -> words) before tokenizing, so
a natural-language query can meet the words a name is made of. The builtin engine's index
stores it (`save`, by `build_index`), so each evaluation memory-maps it (`load`) instead of
building it again.

bm25s computes the scores at build time: a term x document matrix (CSC) of each term's
BM25 contribution. Scoring a query is then summing its terms' columns, which this module
does itself, with the same arithmetic as bm25s's `get_scores` (float32, `np.add.at` term by
term, in query order), so an evaluation never imports bm25s and the scipy it loads, a tenth
of a second of every job. The tokenizer is bm25s's (lowercase, the `\\w\\w+` words, its
English stopwords, Snowball's English stemmer), stored beside the matrix as the build
took it from bm25s, so queries are read exactly as the documents were. An arm's tokenizer
knobs (`CRMATRIX_BM25_*`, `Tokenizer.settings`) turn the stemmer or the stopwords off, or add
each identifier whole beside its words; at their defaults the stored settings are today's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from itertools import chain
from pathlib import Path

import numpy as np
import Stemmer

from crmatrix import CrmatrixError, atomic
from crmatrix.engine.knobs import Knobs
from crmatrix.identifiers import words
from crmatrix.symbols import Symbol

IDENTIFIER = r"\w+"  # what a text's identifiers are (`Tokenizer`)
_IDENTIFIER = re.compile(IDENTIFIER)
TOKENIZER = "tokenizer.json"  # beside bm25s's own files
WORD_PATTERN = r"(?u)\b\w\w+\b"  # bm25s's token pattern
MAX_IDENTIFIERS = 1 << 20  # distinct identifiers a tokenizer remembers (sympy's 124 commits' symbols hold 112k)
SCORED_METHOD = "lucene"  # bm25s's default: no term adds a score to the documents it does not occur in


def document(s: Symbol) -> str:
    return " ".join((s.path, s.qualname, s.signature, s.doc, s.body))


class Tokenizer:
    """bm25s.tokenize(texts, stopwords=..., stemmer=..., return_ids=False) of the texts with each
    identifier spelled as its words ("load parseHTTPResponse" -> "load parse HTTP Response"), from
    its settings (`settings(knobs)` at build time, the index's tokenizer.json after): no stopwords
    and no stemmer where the knobs turn them off, and with `whole_identifiers` an identifier that
    is not just its one word is read whole first (`load_config` -> load_config, load, config).

    Computed identifier by identifier: spelling puts a space between an identifier's words
    and leaves the characters between identifiers alone, none of which is a word character even
    lowercased (tests/test_engine.py checks every code point), and the pattern's words never cross a non-word
    character — so a text's tokens are its identifiers' tokens in order. An identifier's tokens
    are worked out once per tokenizer (its words, lowercased, the pattern's words, stopwords
    dropped, stemmed): names repeat all over a corpus, and the regular expression substitution
    with a Python call per identifier was most of an index build's BM25 time (this is 3x faster
    on sympy's and xarray's symbols)."""

    def __init__(self, tokenizer: dict):
        if tokenizer.get("pattern") != WORD_PATTERN:  # the loaders name the file this came from
            raise ValueError(f"token pattern {tokenizer.get('pattern')!r}, expected {WORD_PATTERN!r}")
        self.conf = tokenizer
        stemmer = Stemmer.Stemmer(tokenizer["stemmer"]) if tokenizer["stemmer"] is not None else None
        self._tokens = IdentifierTokens(re.compile(tokenizer["pattern"]).findall, frozenset(tokenizer["stopwords"]),
                                        stemmer, bool(tokenizer.get("whole_identifiers", False)))

    @staticmethod
    def settings(knobs: Knobs | None = None) -> dict:
        """bm25s's defaults with its English stopwords (which only bm25s holds: build time only),
        as the arm's tokenizer knobs change them (None: the defaults). `whole_identifiers` is
        written only when on, so the defaults' tokenizer.json is the one written before it existed."""
        from bm25s.stopwords import STOPWORDS_EN

        knobs = knobs or Knobs()
        conf = {"pattern": WORD_PATTERN, "stopwords": sorted(set(STOPWORDS_EN)) if knobs.bm25_stopwords else [],
                "stemmer": "english" if knobs.bm25_stem else None}
        return {**conf, "whole_identifiers": True} if knobs.bm25_whole_identifiers else conf

    def identifiers(self, identifiers: Iterable[str]) -> list[list[str]]:
        """Each identifier's tokens: a text's are its identifiers' (`\\w+`), in order (`__call__`)."""
        return list(map(self._tokens.__getitem__, identifiers))

    def __call__(self, texts: list[str]) -> list[list[str]]:
        tokens = self._tokens.__getitem__
        return [list(chain.from_iterable(map(tokens, _IDENTIFIER.findall(text)))) for text in texts]


class IdentifierTokens(dict):
    """Identifier -> its tokens, worked out on first use (`__missing__`), so a text's tokens are
    one `map` over its identifiers. `stemmer`: None, words kept as they are; `whole`: an
    identifier that is not its one word (`load_config`, `parseJSON`, `_private`) is a token
    too, lowercased and unstemmed, before its words: a query naming it exactly meets it whole."""

    def __init__(self, split, stopwords: frozenset[str], stemmer, whole: bool = False):
        super().__init__()
        self._split, self._stopwords, self._stemmer, self._whole = split, stopwords, stemmer, whole

    def __missing__(self, identifier: str) -> list[str]:
        parts = words(identifier)
        found = [w for piece in parts for w in self._split(piece.lower()) if w not in self._stopwords]
        if len(self) >= MAX_IDENTIFIERS:  # bounds the memory of a long-lived tokenizer
            self.clear()
        stems = self._stemmer.stemWords(found) if found and self._stemmer is not None else found
        if self._whole and parts and parts != (identifier,):
            stems = [identifier.lower(), *stems]
        self[identifier] = stems
        return stems


class BM25Index:
    def __init__(self, matrix: dict, vocab: dict[str, int], dtype: str, int_dtype: str, tokenizer: Tokenizer,
                 built=None):
        """`matrix`: bm25s's scores (term t's `data` at its `indices`, indptr[t]:indptr[t + 1], of
        `num_docs` documents); `built`: the bm25s.BM25 it came from, if built here (what `save` writes)."""
        self._data, self._indices, self._indptr = matrix["data"], matrix["indices"], matrix["indptr"]
        self.num_docs = matrix["num_docs"]
        self._vocab, self._dtype, self._int_dtype = vocab, np.dtype(dtype), np.dtype(int_dtype)
        self._tokenize = tokenizer
        self._built = built

    @classmethod
    def build(cls, symbols: list[Symbol], knobs: Knobs | None = None) -> BM25Index:
        return cls.build_texts([document(s) for s in symbols], knobs)

    @classmethod
    def build_texts(cls, texts: list[str], knobs: Knobs | None = None) -> BM25Index:
        """BM25 of these documents (`build` of symbols, or whole files as documents), tokenized
        as `knobs` say (None: the defaults)."""
        import bm25s  # with scipy: only where an index is built

        tokenizer = Tokenizer(Tokenizer.settings(knobs))
        docs = tokenizer(texts)
        # token ids in sorted order, so one corpus stores the same bytes (bm25s numbers tokens in
        # the order of a set of strings, which changes from one process to the next)
        vocab = {t: i for i, t in enumerate(sorted({t for doc in docs for t in doc}))}
        bm25 = bm25s.BM25()
        bm25.index(([[vocab[t] for t in doc] for doc in docs], vocab), show_progress=False)
        return cls(bm25.scores, bm25.vocab_dict, bm25.dtype, bm25.int_dtype, tokenizer, bm25)

    def save(self, directory: Path) -> None:
        """Into a directory of its own (inside a staged index directory: it appears whole or not at all)."""
        if self._built is None:
            raise CrmatrixError(f"{directory}: only a BM25 built in this process is saved")
        self._built.save(str(directory), show_progress=False)
        atomic.write_json(Path(directory) / TOKENIZER, self._tokenize.conf)

    @classmethod
    def load(cls, directory: Path, symbols: int) -> BM25Index:
        """The index `save` wrote, its arrays memory-mapped (they are never written to), checked
        to score `symbols` documents."""
        directory = Path(directory)
        try:
            params = atomic.read_json(directory / "params.index.json")
            vocab = atomic.read_json(directory / "vocab.index.json")
            tokenizer = Tokenizer(atomic.read_json(directory / TOKENIZER))
            matrix = {name: np.load(directory / f"{name}.csc.index.npy", mmap_mode="r")
                      for name in ("data", "indices", "indptr")}
        except (OSError, ValueError, KeyError) as e:
            raise CrmatrixError(f"{directory}: not a readable BM25 index ({e}); delete the index and run "
                                "again") from None
        if params.get("method") != SCORED_METHOD:
            raise CrmatrixError(f"{directory}: BM25 variant {params.get('method')!r}, expected {SCORED_METHOD!r}; "
                                "delete the index and run again")
        if params["num_docs"] != symbols:
            raise CrmatrixError(f"{directory}: scores {params['num_docs']} documents, expected {symbols} "
                                "symbols; delete the index and run again")
        return cls({**matrix, "num_docs": symbols}, vocab, params["dtype"], params["int_dtype"], tokenizer)

    def scores(self, query: str) -> np.ndarray:
        """One BM25 score per symbol, in symbol order (0 where no query term occurs)."""
        ids = np.asarray([self._vocab[t] for t in self._tokenize([query])[0] if t in self._vocab],
                         dtype=self._int_dtype)
        scores = np.zeros(self.num_docs, dtype=self._dtype)
        for start, end in zip(self._indptr[ids], self._indptr[ids + 1], strict=True):
            np.add.at(scores, self._indices[start:end], self._data[start:end])
        return scores
