"""One engine over one corpus's symbols, answering `search(query, method, k)`."""

from __future__ import annotations

from crmatrix import CrmatrixError
from crmatrix.engine import lexical
from crmatrix.hits import Hit, ranked
from crmatrix.symbols import Symbol

METHODS = ("lexical",)


class Engine:
    def __init__(self, symbols: list[Symbol], env: dict[str, str] | None = None):
        self.symbols = symbols
        self.env = dict(env or {})
        self._lexical_docs = [lexical.LexicalDoc.of(s) for s in symbols]

    def lexical(self, query: str) -> list[Hit]:
        q = lexical.LexicalQuery.of(query)
        hits = []
        for sym, doc in zip(self.symbols, self._lexical_docs):
            sc = lexical.score(doc, q)
            if sc is not None:
                hits.append(Hit(sym.path, sym.name, sym.kind, sym.start_line, sym.end_line, sc))
        return hits

    def search(self, query: str, method: str, k: int) -> list[Hit]:
        if method not in METHODS:
            raise CrmatrixError(f"builtin engine: unknown method {method!r} (expected one of: {', '.join(METHODS)})")
        return ranked(getattr(self, method)(query), k)
