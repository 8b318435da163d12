"""`builtin`: the reference engine, honouring the CodeLens knob variables of the arm's env."""

from __future__ import annotations

from crmatrix import CrmatrixError
from crmatrix.engine.knobs import table
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
        from crmatrix.versions.engines import open_versions

        self.knobs = ctx.arm_knobs()
        self.methods = BUILTIN_METHODS if ctx.methods is None else tuple(ctx.methods)
        self._queries: list[str] = []
        # one way of opening, whatever the corpus's versions (crmatrix.versions.engines): a corpus of
        # one version gives its engine now, a repository each commit's when `select` asks for it
        self.versions = open_versions(ctx, self.knobs, self.methods)
        self.graph, self.index_meta = self.versions.graph, self.versions.index_meta
        self.vector_bytes = self.versions.vector_bytes
        self.engine = self.versions.single

    def select(self, corpus: str):
        """The engine of the version `corpus` names (a task's corpus), and its symbols."""
        engine = self.versions.engine(corpus)
        if engine is not self.engine:  # a commit's, new: its queries prepared as a plain one's were
            self.engine = engine
            engine.prepare(self._queries, self.methods)
        return engine.symbols

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
    def needs_index(cls, spec) -> bool:
        """An embedding index, for the methods that rank by vectors (without one, a repository
        corpus still gets an index, of its lexical parts alone: `crmatrix.config.plan`)."""
        return bool(VECTOR_METHODS & set(spec.methods))

    @classmethod
    def optional_methods(cls, options: dict) -> tuple[str, ...]:
        """SweRank's BM25 over its function corpus; whole files as documents (MTEB's way), on a
        repository corpus (`repositories:`)."""
        return FUNCTION_METHODS + FILE_METHODS

    @classmethod
    def index_spec(cls, spec, arm, language: str | None, models: dict) -> dict:
        """Its index fields (`ArmKnobs.index_spec`) and the key of the arm's model (`models`: its
        definition, its files by their contents), never the arm's or the model's name; no model
        for a system that ranks by no vectors, whose index (a repository's) holds none, so arms
        with other models share it."""
        return {"knobs": arm.knobs.index_spec(language),
                "model": models[arm.model] if cls.needs_index(spec) else None}

    @classmethod
    def embedding_spec(cls, index_spec: dict) -> dict:
        """Its spec without BM25's tokenizer, which changes no embedding text."""
        tokenizer = set(table.fields(table.TOKENIZER))
        return {**index_spec, "knobs": {k: v for k, v in index_spec["knobs"].items() if k not in tokenizer}}

    @classmethod
    def reads_graph(cls, arm) -> bool:
        """Only an arm that expands over the graph reads it, so a graph edit re-runs no other."""
        return arm.knobs.knobs(None).graph_expand

    def prepare(self, queries: list[str]) -> None:
        self._queries = queries  # a repository of many commits: each commit's engine's, when selected
        if self.engine is not None:
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
