"""BM25 over symbols with bm25s: one tokenizer, stemmer and stopword list for corpus and queries.

Identifiers are split (`parseHTTPResponse`, `load_config` -> words) before tokenizing, so
a natural-language query can meet the words a name is made of.
"""

from __future__ import annotations

import re

import bm25s
import numpy as np
import Stemmer

from crmatrix.identifiers import words
from crmatrix.symbols import Symbol

_IDENTIFIER = re.compile(r"\w+")


def split_words(text: str) -> str:
    """`text` with each identifier spelled as its words: "load parseHTTPResponse" -> "load parse HTTP Response"."""
    return _IDENTIFIER.sub(lambda m: " ".join(words(m.group())), text)


def document(s: Symbol) -> str:
    return " ".join((s.path, s.qualname, s.signature, s.doc, s.body))


class BM25Index:
    def __init__(self, symbols: list[Symbol]):
        self._stemmer = Stemmer.Stemmer("english")
        self._bm25 = bm25s.BM25()
        self._bm25.index(self._tokenize([document(s) for s in symbols]), show_progress=False)

    def _tokenize(self, texts: list[str]) -> list[list[str]]:
        return bm25s.tokenize([split_words(t) for t in texts], stopwords="en", stemmer=self._stemmer,
                              return_ids=False, show_progress=False)

    def scores(self, query: str) -> np.ndarray:
        """One BM25 score per symbol, in symbol order (0 where no query term occurs)."""
        tokens = [t for t in self._tokenize([query])[0] if t in self._bm25.vocab_dict]
        if not tokens:
            return np.zeros(self._bm25.scores["num_docs"], dtype=np.float32)
        return self._bm25.get_scores(tokens)
