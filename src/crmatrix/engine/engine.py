"""One engine over one corpus's symbols under one arm's knobs: `search(query, method, k)`.

Methods: `lexical` (CodeLens's structural ranker), `semantic` (cosine over the index's
vectors), `hybrid` (lexical merged with semantic hits, then the 2e re-rank when on) and
`bm25`. Every method returns hits in the one deterministic order of `crmatrix.hits`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from crmatrix import CrmatrixError
from crmatrix.engine import hybrid, lexical, sparse
from crmatrix.engine.knobs import Knobs
from crmatrix.hits import Hit, ranked
from crmatrix.symbols import Symbol

METHODS = ("lexical", "semantic", "hybrid", "bm25")
INDEX_METHODS = frozenset({"semantic", "hybrid"})  # the methods that need embedded symbols
QueryEncoder = Callable[[list[str]], np.ndarray]


class Engine:
    def __init__(self, symbols: list[Symbol], knobs: Knobs | None = None, vectors: np.ndarray | None = None,
                 encode_queries: QueryEncoder | None = None):
        self.symbols = symbols
        self.knobs = knobs or Knobs()
        self.vectors = vectors
        self._encode = encode_queries
        self._query_vectors: dict[str, np.ndarray] = {}
        self._lexical_docs = [lexical.LexicalDoc.of(s) for s in symbols]
        self._sparse_fields = [" ".join((s.name, s.qualname, s.signature, s.path)).lower() for s in symbols]
        self._order = {i: (s.path, s.start_line, s.name) for i, s in enumerate(symbols)}
        self._bm25 = None

    # -- query vectors ------------------------------------------------------------------

    def prepare(self, queries: list[str]) -> None:
        """Embed all queries and build BM25 up front, so search latency is the search alone."""
        self._bm25_index()
        todo = sorted({q for q in queries if q not in self._query_vectors})
        if todo and self._encode is not None:
            for q, v in zip(todo, self._encode(todo)):
                self._query_vectors[q] = v

    def _query_vector(self, query: str) -> np.ndarray:
        if self.vectors is None or self._encode is None:
            raise CrmatrixError("builtin engine: semantic search needs an index with vectors and a query encoder")
        if query not in self._query_vectors:
            self.prepare([query])
        return self._query_vectors[query]

    # -- candidate scores (symbol index -> score) ----------------------------------------

    def lexical_scores(self, query: str) -> dict[int, float]:
        q = lexical.LexicalQuery.of(query)
        out = {}
        for i, doc in enumerate(self._lexical_docs):
            sc = lexical.score(doc, q)
            if sc is not None:
                out[i] = sc
        return out

    def semantic_top(self, query: str, n: int) -> list[tuple[int, float]]:
        """The n best symbols by cosine, ties broken by (path, line, name)."""
        cos = self.vectors @ self._query_vector(query)
        if n < len(cos):
            kth = np.partition(-cos, n - 1)[n - 1]
            candidates = np.flatnonzero(-cos <= kth)  # everything tied with the n-th stays in
        else:
            candidates = np.arange(len(cos))
        best = sorted(candidates.tolist(), key=lambda i: (-float(cos[i]), self._order[i]))
        return [(i, float(cos[i])) for i in best[:n]]

    def _bm25_index(self):
        if self._bm25 is None:
            from crmatrix.engine.bm25 import BM25Index

            self._bm25 = BM25Index(self.symbols)
        return self._bm25

    def bm25_scores(self, query: str) -> dict[int, float]:
        scores = self._bm25_index().scores(query)
        return {int(i): float(scores[i]) for i in np.flatnonzero(scores > 0)}

    def hybrid_scores(self, query: str) -> dict[int, float]:
        merged = hybrid.merge(query, self.lexical_scores(query), self.semantic_top(query, hybrid.MAX_SEMANTIC))
        k = self.knobs
        if k.sparse:
            terms = sparse.query_terms(query)
            for i in merged:
                merged[i] += sparse.coverage_bonus(terms, self._sparse_fields[i], k.sparse_threshold, k.sparse_max)
        return merged

    # -- the system interface -------------------------------------------------------------

    def _hits(self, scores: dict[int, float], k: int) -> list[Hit]:
        return ranked([Hit(s.path, s.name, s.kind, s.start_line, s.end_line, float(scores[i]))
                       for i, s in ((i, self.symbols[i]) for i in scores)], k)

    def search(self, query: str, method: str, k: int) -> list[Hit]:
        if method == "lexical":
            return self._hits(self.lexical_scores(query), k)
        if method == "semantic":
            return self._hits(dict(self.semantic_top(query, k)), k)
        if method == "hybrid":
            return self._hits(self.hybrid_scores(query), k)
        if method == "bm25":
            return self._hits(self.bm25_scores(query), k)
        raise CrmatrixError(f"builtin engine: unknown method {method!r} (expected one of: {', '.join(METHODS)})")
