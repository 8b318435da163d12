"""BM25 over symbols with bm25s: one tokenizer, stemmer and stopword list for corpus and queries.

Identifiers are split (`parseHTTPResponse`, `load_config` -> words) before tokenizing, so
a natural-language query can meet the words a name is made of. The builtin engine's index
stores it (`save`, by `build_index`), so each evaluation memory-maps it (`load`) instead of
building it again.
"""

from __future__ import annotations

import re
from pathlib import Path

import bm25s
import numpy as np
import Stemmer

from crmatrix import CrmatrixError
from crmatrix.identifiers import words
from crmatrix.symbols import Symbol

_IDENTIFIER = re.compile(r"\w+")


def split_words(text: str) -> str:
    """`text` with each identifier spelled as its words: "load parseHTTPResponse" -> "load parse HTTP Response"."""
    return _IDENTIFIER.sub(lambda m: " ".join(words(m.group())), text)


def document(s: Symbol) -> str:
    return " ".join((s.path, s.qualname, s.signature, s.doc, s.body))


class BM25Index:
    def __init__(self, bm25: bm25s.BM25):
        self._stemmer = Stemmer.Stemmer("english")
        self._bm25 = bm25

    @classmethod
    def build(cls, symbols: list[Symbol]) -> BM25Index:
        index = cls(bm25s.BM25())
        docs = index._tokenize([document(s) for s in symbols])
        # token ids in sorted order, so one corpus stores the same bytes (bm25s numbers tokens in
        # the order of a set of strings, which changes from one process to the next)
        vocab = {t: i for i, t in enumerate(sorted({t for doc in docs for t in doc}))}
        index._bm25.index(([[vocab[t] for t in doc] for doc in docs], vocab), show_progress=False)
        return index

    def save(self, directory: Path) -> None:
        """Into a directory of its own (inside a staged index directory: it appears whole or not at all)."""
        self._bm25.save(str(directory), show_progress=False)

    @classmethod
    def load(cls, directory: Path, symbols: int) -> BM25Index:
        """The index `save` wrote, its arrays memory-mapped (they are never written to), checked
        to score `symbols` documents."""
        try:
            bm25 = bm25s.BM25.load(str(directory), mmap=True, show_progress=False)
        except (OSError, ValueError) as e:
            raise CrmatrixError(f"{directory}: not a readable BM25 index ({e}); delete the index and run "
                                "again") from None
        if bm25.scores["num_docs"] != symbols:
            raise CrmatrixError(f"{directory}: scores {bm25.scores['num_docs']} documents, expected {symbols} "
                                "symbols; delete the index and run again")
        return cls(bm25)

    def _tokenize(self, texts: list[str]) -> list[list[str]]:
        return bm25s.tokenize([split_words(t) for t in texts], stopwords="en", stemmer=self._stemmer,
                              return_ids=False, show_progress=False)

    def scores(self, query: str) -> np.ndarray:
        """One BM25 score per symbol, in symbol order (0 where no query term occurs)."""
        tokens = [t for t in self._tokenize([query])[0] if t in self._bm25.vocab_dict]
        if not tokens:
            return np.zeros(self._bm25.scores["num_docs"], dtype=np.float32)
        return self._bm25.get_scores(tokens)
