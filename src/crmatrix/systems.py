"""Systems under test: anything that answers `search(query, method, k) -> ranked hits`.

`builtin` is the reference engine; third-party systems register a factory under the
entry-point group `crmatrix.systems` and are then named by `type:` in the config.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import Protocol

from crmatrix import CrmatrixError
from crmatrix.languages import dominant_language
from crmatrix.engine import INDEX_METHODS, Engine
from crmatrix.engine import METHODS as BUILTIN_METHODS
from crmatrix.hits import Hit
from crmatrix.symbols import Symbol

ENTRY_POINT_GROUP = "crmatrix.systems"


@dataclass
class SystemContext:
    """Everything a system may use to answer queries over one corpus under one arm."""

    corpus_dir: Path
    manifest: dict
    symbols: list[Symbol]
    env: dict[str, str] = field(default_factory=dict)
    options: dict = field(default_factory=dict)
    index_dir: Path | None = None  # the builtin engine's index for this arm, when it has one
    cache_dir: Path | None = None  # the shared embedding cache
    threads: int | None = None
    model_dir: Path | None = None  # the prepared model the arm names, when the index needs one
    graph_file: Path | None = None  # the corpus's reference graph (crmatrix.graph), when the job needs it


class System(Protocol):
    """`prepare(queries)` (optional) runs once before the timed searches, e.g. to embed all
    queries; `provenance()` (optional) says what the system ran with."""

    METHODS: tuple[str, ...]

    def search(self, query: str, method: str, k: int) -> list[Hit]: ...


class BuiltinSystem:
    """The reference engine, honouring the CodeLens knob variables of the arm's env."""

    METHODS = BUILTIN_METHODS

    def __init__(self, ctx: SystemContext):
        from crmatrix import graph
        from crmatrix.engine import index, knobs

        # Auto gating follows the corpus's dominant language unless the arm names one.
        self.knobs = knobs.resolve(ctx.env, dominant_language(ctx.manifest))
        vectors, encode, self.index_meta = None, None, None
        if ctx.index_dir is not None:
            if ctx.model_dir is None:
                raise CrmatrixError(f"{ctx.index_dir}: an index needs the arm's prepared model directory")
            vectors, self.index_meta = index.load(ctx.index_dir, ctx.symbols, self.knobs, ctx.model_dir)
            encode = index.query_encoder(ctx.model_dir, ctx.cache_dir, ctx.threads)
        self.graph = graph.read(ctx.graph_file, ctx.symbols) if ctx.graph_file is not None else None
        self.engine = Engine(ctx.symbols, self.knobs, vectors, encode,
                             self.graph.neighbours(ctx.symbols) if self.graph is not None else None)

    def prepare(self, queries: list[str]) -> None:
        self.engine.prepare(queries)

    def search(self, query: str, method: str, k: int) -> list[Hit]:
        return self.engine.search(query, method, k)

    def calls(self, direction: str, symbol: str, file_suffix: str | None) -> list[tuple[str, str]]:
        """(name, path) of the callers or callees of `symbol`, answered from the graph."""
        if self.graph is None:
            raise CrmatrixError("builtin: call-graph answers need the corpus's graph (results/graph/)")
        return self.graph.call_edges(direction, symbol, file_suffix)

    def provenance(self) -> dict:
        out = {"knobs": self.knobs.to_dict()}
        if self.index_meta is not None:
            m = self.index_meta["model"]
            out["model"] = {k: m[k] for k in ("backend", "source", "sha256", "quantize") if k in m}
            out["index_embedding"] = self.index_meta["embedding"]
        return out


def registry() -> dict[str, type]:
    found = {"builtin": BuiltinSystem}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name not in found:
            found[ep.name] = ep.load()
    return found


def system_class(type_name: str) -> type:
    reg = registry()
    if type_name not in reg:
        raise CrmatrixError(f"unknown system type {type_name!r} (registered: {', '.join(sorted(reg))})")
    return reg[type_name]


def check_system_config(name: str, conf: dict) -> None:
    """Resolve the system's type and fill in / check its methods (config validation calls this)."""
    try:
        cls = system_class(conf["type"])
    except CrmatrixError as e:
        raise CrmatrixError(f"systems.{name}.type: {e}") from None
    methods = conf.setdefault("methods", list(cls.METHODS))
    unknown = [m for m in methods if m not in cls.METHODS]
    if unknown:
        raise CrmatrixError(f"systems.{name}.methods: {', '.join(unknown)} not supported by {conf['type']} "
                            f"(expected some of: {', '.join(cls.METHODS)})")


def needs_index(conf: dict) -> bool:
    """Whether the workflow must build an embedding index for this system."""
    return conf["type"] == "builtin" and bool(INDEX_METHODS & set(conf["methods"]))


def make_system(conf: dict, ctx: SystemContext) -> System:
    return system_class(conf["type"])(ctx)
