"""`builtin`: the reference engine, honouring the CodeLens knob variables of the arm's env."""

from __future__ import annotations

from pathlib import Path

from crmatrix import CrmatrixError
from crmatrix.corpora.languages import dominant_language
from crmatrix.engine.methods import FILE_METHODS, FUNCTION_METHODS, VECTOR_METHODS
from crmatrix.engine.methods import METHODS as BUILTIN_METHODS
from crmatrix.hits import FILE, SYMBOL, Hit
from crmatrix.systems.registry import BUILTIN, System, register


@register(BUILTIN)
class BuiltinSystem(System):
    METHODS = BUILTIN_METHODS
    EMBEDS = True
    ANSWERS_CALLS = True

    def __init__(self, ctx):
        super().__init__(ctx)
        from crmatrix.engine import knobs

        # Auto gating follows the corpus's dominant language unless the arm names one.
        self.knobs = knobs.resolve(ctx.env, dominant_language(ctx.manifest))
        self.methods = BUILTIN_METHODS if ctx.methods is None else tuple(ctx.methods)
        self.graph, self.index_meta, self._queries, self._versions = None, None, [], None
        if ctx.store_dir is not None:
            self._open_versions(ctx)
        else:
            self._open(ctx)

    def _open(self, ctx) -> None:
        """One corpus: its index (vectors, BM25) and graph, one engine."""
        from crmatrix import graph
        from crmatrix.engine import index
        from crmatrix.engine.engine import Engine

        vectors, encode, bm25 = None, None, None
        if ctx.index_dir is not None:
            if ctx.model_dir is None:
                raise CrmatrixError(f"{ctx.index_dir}: an index needs the arm's prepared model directory")
            vectors, self.index_meta = index.load(ctx.index_dir, ctx.symbols, self.knobs, ctx.model_dir)
            self.vector_bytes = int(vectors.nbytes)
            if "bm25" in self.methods:  # else never read
                bm25 = index.load_bm25(ctx.index_dir, ctx.symbols)
            encode = self._encoder(ctx)
        self.graph = graph.read(ctx.graph_file, ctx.symbols) if ctx.graph_file is not None else None
        self.engine = Engine(ctx.symbols, self.knobs, vectors, encode,
                             self.graph.neighbours(ctx.symbols) if self.graph is not None else None, bm25,
                             repository=ctx.manifest.get("repository"))

    def _open_versions(self, ctx) -> None:
        """A repository of many commits (a store of its distinct symbol contents and an index of
        them, crmatrix.versions.index): each commit's engine is made by `select`. Without a
        model (no method ranks by vectors) the index holds none, and no query is embedded."""
        from crmatrix.versions import index as versioned
        from crmatrix.versions.store import SymbolStore

        if ctx.index_dir is None:
            raise CrmatrixError(f"{ctx.store_dir}: a repository of many commits is searched through its index "
                                "(rule build_repository_index)")
        index_dir = Path(ctx.index_dir)
        self._versions = versioned.VersionedIndex(index_dir / versioned.SYMBOL_INDEX, SymbolStore(ctx.store_dir),
                                                  self.knobs, ctx.model_dir)
        self._files = (versioned.VersionedFiles(index_dir / versioned.FILE_INDEX, ctx.model_dir)
                       if set(FILE_METHODS) & set(self.methods) else None)
        self._repository, self._encode = ctx.manifest.get("repository"), None
        if ctx.model_dir is not None:
            self.index_meta = self._versions.meta
            self.vector_bytes = int(self._versions.vectors.nbytes)
            self._encode = self._encoder(ctx)
        self.engine = None

    def _encoder(self, ctx):
        """The queries embedded once for every arm (no model loaded here), else embedded now."""
        from crmatrix.embed import queries

        if ctx.query_vectors is not None:
            return queries.reader(ctx.query_vectors, self.index_meta["model"]["sha256"])
        return queries.query_encoder(ctx.model_dir, ctx.cache_dir, ctx.threads)

    def select(self, corpus: str):
        """The engine of the commit `corpus` names, on a repository of many commits."""
        if self._versions is None:  # one corpus: the job's symbols
            return None
        from crmatrix.versions import commit_of

        commit = commit_of(corpus)
        self.engine = self._versions.engine(commit, self.knobs, self._encode,
                                            files=self._files.view(commit) if self._files is not None else None,
                                            repository=self._repository)
        self.engine.prepare(self._queries, self.methods)
        return self.engine.symbols

    @classmethod
    def check_options(cls, options: dict) -> None:
        """It takes none: what it runs with are the arms' knob variables. A key under its
        `options:` is refused, as the other types refuse an unknown one, never recorded and ignored."""
        if options:
            from crmatrix.engine.knobs import table

            key = sorted(options)[0]
            where = (f"{key} is a knob: set it in an arm, arms.NAME.{key}" if table.ours(key)
                     else "its settings are the arms' knob variables, docs/knobs.md")
            raise CrmatrixError(f"{key}: not an option of builtin, which takes none ({where})")

    @classmethod
    def needs_index(cls, conf: dict) -> bool:
        """An embedding index, for the methods that rank by vectors (without one, a repository
        corpus still gets an index, of its lexical parts alone: `crmatrix.config.plan`)."""
        return bool(VECTOR_METHODS & set(conf["methods"]))

    @classmethod
    def optional_methods(cls, options: dict) -> tuple[str, ...]:
        """SweRank's BM25 over its function corpus; whole files as documents (MTEB's way), on a
        repository corpus (`repositories:`)."""
        return FUNCTION_METHODS + FILE_METHODS

    @classmethod
    def index_spec(cls, conf: dict, arm, language: str | None, models: dict) -> dict:
        """Its index fields (`ArmKnobs.index_spec`) and the key of the arm's model (`models`: its
        definition, its files by their contents), never the arm's or the model's name; no model
        for a system that ranks by no vectors, whose index (a repository's) holds none, so arms
        with other models share it."""
        return {"knobs": arm.knobs.index_spec(language),
                "model": models[arm.model] if cls.needs_index(conf) else None}

    @classmethod
    def reads_graph(cls, arm) -> bool:
        """Only an arm that expands over the graph reads it, so a graph edit re-runs no other."""
        return arm.knobs.knobs(None).graph_expand

    def prepare(self, queries: list[str]) -> None:
        if self.engine is None:  # a repository of many commits: each commit's engine, when selected
            self._queries = queries
        else:
            self.engine.prepare(queries, self.methods)

    def search(self, query: str, method: str, k: int) -> list[Hit]:
        return self.engine.search(query, method, k)

    def calls(self, direction: str, symbol: str, file_suffix: str | None) -> list[tuple[str, str]]:
        """(name, path) of the callers or callees of `symbol`, answered from the graph."""
        if self.graph is None:
            raise CrmatrixError("builtin: call-graph answers need the corpus's graph (results/graph/)")
        return self.graph.call_edges(direction, symbol, file_suffix)

    def granularity(self, method: str) -> str:
        """Its whole-file methods answer files, the others definitions."""
        return FILE if method in FILE_METHODS else SYMBOL

    def provenance(self) -> dict:
        out = {"knobs": self.knobs.to_dict()}
        if self.index_meta is not None:
            m = self.index_meta["model"]
            out["model"] = {k: m[k] for k in ("backend", "source", "sha256", "quantize") if k in m}
            # what the index cost (the cost table's throughput and size): its vectors' bytes
            out["index_embedding"] = {**self.index_meta["embedding"], "bytes": self.vector_bytes}
        return out
