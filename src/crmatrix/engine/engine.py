"""One engine over one corpus's symbols under one arm's knobs: `search(query, method, k)`.

Methods: `lexical` (CodeLens's structural ranker), `semantic` (cosine over the index's
vectors), `hybrid` (lexical and semantic fused as the arm's CRMATRIX_FUSION says, then
one-hop graph expansion and the 2e re-rank when on) and `bm25`; `swerank-bm25`, SweRank's
BM25 (its corpus: the functions and methods, no class and nothing at module level, of the
files SweRank's candidate rule keeps, `crmatrix.corpora.candidates`; BM25 over those alone,
with their own document count, frequencies and lengths; a file ranks at its first function);
and, given the corpus's files as documents (`crmatrix.engine.files`), `file-bm25` and
`file-semantic`, whose hits are whole files. Scores are arrays over all symbols (or files;
NaN: not a candidate), so a query costs a few vector operations; every method returns hits in
the one deterministic order of `crmatrix.hits`, (-score, path, start_line, symbol).

An engine builds what it ranks with from its symbols, unless it is handed it already built
(`lexical`, `sparse`, `tie`, `bm25`): a versioned index's view of one commit
(`crmatrix.versions.index`) hands over what it gathered from its distinct contents, and
`symbols` may then be any sequence of them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from crmatrix import CrmatrixError
from crmatrix.corpora import candidates
from crmatrix.engine import expansion, fusion
from crmatrix.engine import lexical as _lexical
from crmatrix.engine import sparse as _sparse
from crmatrix.engine.knobs import Knobs
from crmatrix.engine.methods import FILE_METHODS, FUNCTION_METHODS, METHODS
from crmatrix.hits import Hit
from crmatrix.symbols import Symbol
from crmatrix.symbols import paths as symbol_paths

if TYPE_CHECKING:
    from crmatrix.engine.bm25 import BM25Index
    from crmatrix.engine.files import FileDocs

QueryEncoder = Callable[[list[str]], np.ndarray]
# The BM25 of some of an engine's symbols (their rows, ascending): anything whose `scores(query)`
# gives one score per row, as `BM25Index.build` of those symbols in that order gives them.
SubsetBM25 = Callable[[np.ndarray], "BM25Index"]


class Engine:
    def __init__(self, symbols: Sequence[Symbol], knobs: Knobs | None = None, vectors: np.ndarray | None = None,
                 encode_queries: QueryEncoder | None = None, neighbours: list[np.ndarray] | None = None,
                 bm25: BM25Index | None = None, lexical: _lexical.LexicalIndex | None = None,
                 sparse: _sparse.SparseIndex | None = None, tie: np.ndarray | None = None,
                 files: FileDocs | None = None, bm25_of: SubsetBM25 | None = None, repository: str | None = None):
        """`neighbours[i]`: the symbols one hop from symbol i in the corpus's graph
        (`crmatrix.graph.Graph.neighbours`); needed when the knobs turn graph expansion on.
        `bm25`: the symbols' BM25 as an index stores it (`index.load_bm25`), or anything whose
        `scores(query)` gives the same; None builds it here. `lexical`, `sparse`: the rankers
        of these symbols, built elsewhere; `tie`: each symbol's place in (path, start_line, name)
        order. `files`: the corpus's files as documents, for the file methods. `bm25_of`: the BM25
        of a subset of the symbols, for `swerank-bm25` (None: built here from them); `repository`:
        the corpus's `owner/name`, which SweRank's candidate rule reads (None: none of its exceptions)."""
        self.symbols = symbols
        self.knobs = knobs or Knobs()
        if self.knobs.graph_expand and neighbours is None:
            raise CrmatrixError("builtin engine: CRMATRIX_GRAPH_EXPAND=1 needs the corpus's graph (results/graph/)")
        self.neighbours = neighbours
        self.vectors = vectors
        self._encode = encode_queries
        self._query_vectors: dict[str, np.ndarray] = {}
        self._lexical = lexical if lexical is not None else _lexical.LexicalIndex(symbols)
        self._sparse = None if not self.knobs.sparse else sparse if sparse is not None else _sparse.SparseIndex(symbols)
        self._bm25 = bm25
        self._bm25_of, self.repository = bm25_of, repository
        self._swerank: tuple[np.ndarray, BM25Index | None] | None = None
        self.files = files
        if tie is None:
            # position of each symbol in (path, start_line, name) order: the tie-break as one int
            order = sorted(range(len(symbols)), key=lambda i: (symbols[i].path, symbols[i].start_line,
                                                                symbols[i].name))
            tie = np.empty(len(symbols), dtype=np.int64)
            tie[order] = np.arange(len(symbols))
        self._tie = tie

    # -- query vectors ------------------------------------------------------------------

    def prepare(self, queries: list[str], methods: Iterable[str] = METHODS) -> None:
        """Embed all queries and build BM25 up front, so search latency is the search alone;
        BM25 only if `methods` holds it (loading bm25s costs more than a small dataset's searches)."""
        if "bm25" in methods:
            self._bm25_index()
        if "swerank-bm25" in methods:
            self._swerank_index()
        todo = sorted({q for q in queries if q not in self._query_vectors})
        vectors = self.vectors if self.vectors is not None else self.files.vectors if self.files is not None else None
        if todo and self._encode is not None and vectors is not None:
            for q, v in zip(todo, self._encode(todo), strict=True):
                self._query_vectors[q] = np.asarray(v, dtype=vectors.dtype)

    def _query_vector(self, query: str, vectors: np.ndarray | None, what: str = "an index") -> np.ndarray:
        if vectors is None or self._encode is None:
            raise CrmatrixError(f"builtin engine: semantic search needs {what} with vectors and a query encoder")
        if query not in self._query_vectors:
            self.prepare([query], methods=())  # the vector alone: no BM25 built on the way
        return self._query_vectors[query]

    # -- scores: one per symbol, NaN where the symbol is not a candidate -------------------

    def lexical_scores(self, query: str) -> np.ndarray:
        return self._lexical.scores(query)

    def _best(self, scores: np.ndarray, n: int, tie: np.ndarray | None = None) -> np.ndarray:
        """Indices of the n best candidates, ties broken by (path, line, name) (`tie`: the
        candidates' places in that order; None: the symbols')."""
        tie = self._tie if tie is None else tie
        cand = np.flatnonzero(~np.isnan(scores))
        if len(cand) > 4 * n:  # narrow to the n best first, keeping every score tied with the n-th
            kth = np.partition(-scores[cand], n - 1)[n - 1]
            cand = cand[-scores[cand] <= kth]
        return cand[np.lexsort((tie[cand], -scores[cand]))][:n]

    def semantic_scores(self, query: str) -> np.ndarray:
        return (self.vectors @ self._query_vector(query, self.vectors)).astype(np.float64)

    def semantic_top(self, query: str, n: int) -> list[tuple[int, float]]:
        cos = self.semantic_scores(query)
        return [(int(i), float(cos[i])) for i in self._best(cos, n)]

    def _bm25_index(self):
        if self._bm25 is None:
            from crmatrix.engine.bm25 import BM25Index

            self._bm25 = BM25Index.build(self.symbols, self.knobs)
        return self._bm25

    def bm25_scores(self, query: str) -> np.ndarray:
        return _matched(self._bm25_index().scores(query))

    def _swerank_index(self) -> tuple[np.ndarray, BM25Index | None]:
        """SweRank's corpus (its rows among the symbols, ascending) and its BM25 (None: no document)."""
        if self._swerank is None:
            # from the symbols' paths and kinds alone: a store's commit makes no symbol for them
            keep = candidates.keeper(candidates.SWERANK, self.repository)
            paths = symbol_paths(self.symbols)
            kept = {p: keep(p) for p in set(paths)}
            rows = np.flatnonzero(self._lexical.is_function
                                  & np.fromiter((kept[p] for p in paths), dtype=bool, count=len(paths)))
            if not len(rows):
                self._swerank = rows, None
            elif self._bm25_of is not None:
                self._swerank = rows, self._bm25_of(rows)
            else:
                from crmatrix.engine.bm25 import BM25Index

                self._swerank = rows, BM25Index.build([self.symbols[i] for i in rows.tolist()], self.knobs)
        return self._swerank

    def swerank_bm25_scores(self, query: str) -> np.ndarray:
        rows, bm25 = self._swerank_index()
        scores = np.full(len(self.symbols), np.nan)
        if bm25 is not None:
            scores[rows] = _matched(bm25.scores(query))
        return scores

    def hybrid_scores(self, query: str) -> np.ndarray:
        kn = self.knobs
        lexical_scores = None if kn.fusion == "dense-only" else self.lexical_scores(query)
        fused = fusion.fuse(kn, query, lexical_scores, self.semantic_top(query, kn.semantic_depth), len(self.symbols))
        if kn.graph_expand:
            fused = expansion.expand(fused, self._best(fused, kn.graph_seeds), self.neighbours, kn.graph_decay)
        # 2e last, as in CodeLens: every candidate, expanded ones too, meets the same coverage rule
        if self._sparse is not None:
            fused += self._sparse.bonus(query, kn.sparse_threshold, kn.sparse_max)
        return fused

    # -- scores of whole files: one per file of `files` ---------------------------------------

    def _files(self, method: str) -> FileDocs:
        if self.files is None:
            raise CrmatrixError(f"builtin engine: {method} needs the corpus's files as documents")
        return self.files

    def file_bm25_scores(self, query: str) -> np.ndarray:
        return _matched(self._files("file-bm25").bm25.scores(query))

    def file_semantic_scores(self, query: str) -> np.ndarray:
        vectors = self._files("file-semantic").vectors
        return (vectors @ self._query_vector(query, vectors, "files")).astype(np.float64)

    # -- the system interface -------------------------------------------------------------

    def search(self, query: str, method: str, k: int) -> list[Hit]:
        if method in FILE_METHODS:
            scores = getattr(self, f"{method.replace('-', '_')}_scores")(query)
            return [self.files.hit(int(i), float(scores[i])) for i in self._best(scores, k, self.files.tie)]
        if method not in METHODS + FUNCTION_METHODS:
            raise CrmatrixError(f"builtin engine: unknown method {method!r} (expected one of: "
                                f"{', '.join(METHODS + FUNCTION_METHODS + FILE_METHODS)})")
        scores = getattr(self, f"{method.replace('-', '_')}_scores")(query)
        return [Hit(s.path, s.name, s.kind, s.start_line, s.end_line, float(scores[i]))
                for i, s in ((int(i), self.symbols[i]) for i in self._best(scores, k))]


def _matched(scores: np.ndarray) -> np.ndarray:
    """BM25 scores as candidates: NaN where no query term occurs."""
    scores = scores.astype(np.float64)
    return np.where(scores > 0, scores, np.nan)
