"""The builtin engine of the version a task names: `open_versions(ctx, knobs, methods)` opens a
job's corpus once, and `engine(corpus)` gives the `crmatrix.engine.engine.Engine` (the one engine
that answers every builtin search) of the version a task's corpus names.

- A corpus of one version (git, PyPI, npm, path; `OneVersion`): its index (vectors, BM25) and
  reference graph, one engine, opened here; it is the engine of every task.
- A repository of many (`ctx.store_dir`, `CommitVersions`): its store of distinct symbol contents and
  the index of them (crmatrix.versions.index); a commit's engine is gathered from it when a task
  at that commit is asked. Without a model (no method ranks by vectors) the index holds none,
  and no query is embedded.

A plain corpus keeps its own index rather than a store of one version: its evaluations read
the reference graph (graph expansion, call-graph answers), which a versioned index does not
carry, and its index is built from the corpus's symbols alone (rule build_index), the fast path
of every default matrix; one way of opening is what the two share.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from crmatrix import CrmatrixError, versions
from crmatrix.engine.engine import Engine, QueryEncoder
from crmatrix.engine.knobs import Knobs
from crmatrix.engine.methods import FILE_METHODS


def _encoder(ctx, index_meta: dict) -> QueryEncoder:
    """The queries embedded once for every arm (no model loaded here), else embedded now."""
    from crmatrix.embed import queries

    if ctx.query_vectors is not None:
        return queries.reader(ctx.query_vectors, index_meta["model"]["sha256"])
    return queries.query_encoder(ctx.model_dir, ctx.cache_dir, ctx.threads)


class Versions:
    """What the builtin opened of its job's corpus: `index_meta` and `vector_bytes` (its index's
    model and what its vectors cost; None and 0 without vectors), `graph` (None: not read),
    `single` (a corpus of one version: its engine, else None) and `engine(corpus)`."""

    index_meta: dict | None = None
    vector_bytes: int = 0
    graph = None
    single: Engine | None = None

    def engine(self, corpus: str) -> Engine:
        """The engine of the version `corpus` names (a task's corpus)."""
        raise NotImplementedError


class OneVersion(Versions):
    """A corpus of one version: its index and graph, one engine."""

    def __init__(self, ctx, knobs: Knobs, methods: Sequence[str]):
        from crmatrix import graph
        from crmatrix.engine import index

        vectors, encode, bm25 = None, None, None
        if ctx.index_dir is not None:
            if ctx.model_dir is None:
                raise CrmatrixError(f"{ctx.index_dir}: an index needs the arm's prepared model directory")
            vectors, self.index_meta = index.load(ctx.index_dir, ctx.symbols, knobs, ctx.model_dir)
            self.vector_bytes = int(vectors.nbytes)
            if "bm25" in methods:  # else never read
                bm25 = index.load_bm25(ctx.index_dir, ctx.symbols)
            encode = _encoder(ctx, self.index_meta)
        self.graph = graph.read(ctx.graph_file, ctx.symbols) if ctx.graph_file is not None else None
        self.single = Engine(ctx.symbols, knobs, vectors, encode,
                             self.graph.neighbours(ctx.symbols) if self.graph is not None else None, bm25,
                             repository=ctx.manifest.get("repository"))

    def engine(self, corpus: str) -> Engine:
        return self.single


class CommitVersions(Versions):
    """A repository of many commits: each commit's engine gathered from the index of its store."""

    def __init__(self, ctx, knobs: Knobs, methods: Sequence[str]):
        from crmatrix.versions import index as versioned
        from crmatrix.versions.store import SymbolStore

        if ctx.index_dir is None:
            raise CrmatrixError(f"{ctx.store_dir}: a repository of many commits is searched through its index "
                                "(rule build_repository_index)")
        index_dir = Path(ctx.index_dir)
        self.knobs = knobs
        self._index = versioned.VersionedIndex(index_dir / versioned.SYMBOL_INDEX, SymbolStore(ctx.store_dir),
                                               knobs, ctx.model_dir)
        self._files = (versioned.VersionedFiles(index_dir / versioned.FILE_INDEX, ctx.model_dir)
                       if set(FILE_METHODS) & set(methods) else None)
        self._repository, self._encode = ctx.manifest.get("repository"), None
        if ctx.model_dir is not None:
            self.index_meta = self._index.meta
            self.vector_bytes = int(self._index.vectors.nbytes)
            self._encode = _encoder(ctx, self.index_meta)

    def engine(self, corpus: str) -> Engine:
        commit = versions.commit_of(corpus)
        return self._index.engine(commit, self.knobs, self._encode,
                                  files=self._files.view(commit) if self._files is not None else None,
                                  repository=self._repository)


def open_versions(ctx, knobs: Knobs, methods: Sequence[str]) -> Versions:
    """The job's corpus opened (`ctx`: its `crmatrix.systems.base.SystemContext`) under the arm's
    `knobs` for `methods`: a repository of many commits when the job hands a store, else one version."""
    return CommitVersions(ctx, knobs, methods) if ctx.store_dir is not None else OneVersion(ctx, knobs, methods)
