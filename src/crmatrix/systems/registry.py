"""The contract of a system under test (anything that answers `search(query, method, k) ->
ranked hits`) and the registry of system types.

One module per system type: `builtin` (the reference engine), `command` (any CLI) and
`mcp` (any stdio MCP server), each registered with `@register("name")` (crmatrix.registry:
third-party types register under the entry-point group `crmatrix.systems`, a notebook or
test with the same decorator); a config names a type by `type:`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

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


class System:
    """The base of every system type: what the workflow asks of a type while it plans (class
    methods over the system's config entry `conf`, or its `options`), and what a job asks of an
    instance. Every optional member has its default here, so callers never probe for one.

    A type answers `search(query, method, k)` with hits or an `Answer`, and may raise
    `crmatrix.systems.answers.QueryFailure` to name the kind of failure. `RESPONSE = "blob"`:
    answers are one composed context, scored at rank 1 only. `SELF_TIMED`: it enforces
    `ctx.timeout_s` itself (the job's guard waits `grace_s` longer, default GRACE_S, so that the
    system reports its own timeout). `batch_size` with `search_batch(queries, method, k)`: tools that take
    many queries per call. `EMBEDS`: the type is crmatrix's own engine, whose index the workflow
    builds from the corpus's symbols with the arm's model (rule build_index, with the dataset's
    queries embedded once per model); any other type that `needs_index` builds it with its own
    index command (rule build_system_index). `ANSWERS_CALLS`: it answers call-graph questions
    (`calls`, see crmatrix.evaluation.callgraph).
    """

    METHODS: tuple[str, ...] = ()
    RESPONSE = "ranked"
    SELF_TIMED = False
    EMBEDS = False
    ANSWERS_CALLS = False
    batch_size: int | None = None
    grace_s: float | None = None

    # -- what the workflow asks while it plans ---------------------------------------------

    @classmethod
    def methods_for(cls, options: dict) -> tuple[str, ...]:
        """The methods the type supports under these options (default: its fixed `METHODS`)."""
        return tuple(cls.METHODS)

    @classmethod
    def check_options(cls, options: dict) -> None:
        """Cross-key checks of the options the schema cannot express; an error's message starts
        with the option's key."""

    @classmethod
    def check_programs(cls, conf: dict) -> None:
        """The programs the system runs are on this host (`crmatrix validate`)."""

    @classmethod
    def needs_index(cls, conf: dict) -> bool:
        """Whether the workflow builds an index for the system before evaluating it."""
        return False

    @classmethod
    def index_env(cls, conf: dict, env: dict[str, str]) -> dict[str, str]:
        """The arm variables its index build sees: arms that agree on them share one index."""
        return {}

    @classmethod
    def index_spec(cls, conf: dict, arm, language: str | None, models: dict) -> dict:
        """What its index of a corpus (whose declared language is given) is built from under
        the arm (`crmatrix.config.matrix.Arm`): arms with equal specs share the index, whose key
        hashes it. `models`: the config's model definitions."""
        return {"type": conf["type"], "env": cls.index_env(conf, arm.env)}

    @classmethod
    def reads_graph(cls, arm) -> bool:
        """Whether its evaluation under the arm reads the corpus's reference graph."""
        return False

    @classmethod
    def code_files(cls, options: dict, index_only: bool = False) -> dict[str, str]:
        """Project path -> sha256 of the project files it runs (of its index command alone, with
        `index_only`): their contents are in its keys (crmatrix.systems.codefiles)."""
        return {}

    @classmethod
    def model_names(cls, options: dict, index_only: bool = False) -> list[str]:
        """The config's models its options name as `{model:NAME}` (in its index command's
        templates alone, with `index_only`): the workflow prepares each for its jobs."""
        return []

    @classmethod
    def installable(cls) -> bool:
        """Whether it may run from an environment of its own that the workflow installs."""
        return False

    # -- what a job asks of an instance ----------------------------------------------------

    def __init__(self, ctx: SystemContext):
        self.ctx = ctx

    def prepare(self, queries: list[str]) -> None:
        """Run once before the timed searches (e.g. embed every query)."""

    def search(self, query: str, method: str, k: int) -> list[Hit] | Answer:
        raise NotImplementedError

    def calls(self, direction: str, symbol: str, file_suffix: str | None) -> list[tuple[str, str]]:
        """(name, path) of the callers or callees of `symbol`, for a type that `ANSWERS_CALLS`."""
        raise CrmatrixError(f"system type {type(self).__name__} answers no call-graph questions")

    def provenance(self) -> dict:
        """What the system ran with (its knobs, the model it embedded with), for the run's record."""
        return {}

    def close(self) -> None:
        """Run once at the end of the job."""


def _builtin_types() -> None:
    from crmatrix.systems import builtin, command, mcp  # noqa: F401 - they register themselves


def _system_type(name: str, obj, **facts) -> type:
    """A registry entry: a System subclass (a decorated class or an entry point's)."""
    if not (isinstance(obj, type) and issubclass(obj, System)):
        raise CrmatrixError(f"system type {name}: {obj!r} is not a subclass of crmatrix.systems.registry.System")
    return obj


TYPES: Registry[type] = Registry("system type", "crmatrix.systems", _builtin_types, _system_type)
register = TYPES.register

# The reference engine's type: a config without `reference_system` compares every system with
# its first system of this type (else its first system).
BUILTIN = "builtin"


def system_class(type_name: str) -> type[System]:
    return TYPES.get(type_name)


def check_system_config(name: str, conf: dict) -> dict:
    """The system's entry with its options and methods filled in, its type resolved and its
    options checked (config resolution calls this after the schema); `conf` is left as it is."""
    cls = TYPES.get(conf["type"], f"systems.{name}.type")
    conf = {**conf, "options": dict(conf.get("options", {}))}
    try:
        cls.check_options(conf["options"])
    except CrmatrixError as e:
        raise CrmatrixError(f"systems.{name}.options.{e}") from None
    if "install" in conf:
        if not cls.installable():
            raise CrmatrixError(f"systems.{name}.install: only command and mcp systems run from an environment "
                                f"of their own (type {conf['type']} runs in crmatrix's)")
    elif templates.uses(conf["options"], "bin"):
        raise CrmatrixError(f"systems.{name}.options: uses {{bin}}, but the system installs nothing "
                            "(expected install: {pip: NAME==VERSION} or {git: URL, commit: SHA})")
    supported = cls.methods_for(conf["options"])
    conf.setdefault("methods", list(supported))
    unknown = [m for m in conf["methods"] if m not in supported]
    if unknown:
        raise CrmatrixError(f"systems.{name}.methods: {', '.join(unknown)} not supported by {conf['type']} "
                            f"(expected some of: {', '.join(supported)})")
    return conf


def default_reference(systems: dict[str, dict]) -> str:
    """The system a config without `reference_system` compares every other one with: its first
    system of the reference engine's type, else its first system (`systems`: name -> entry)."""
    return next((s for s, conf in systems.items() if conf["type"] == BUILTIN), next(iter(systems)))


def check_programs(name: str, conf: dict) -> None:
    """The programs the system runs are on this host (`crmatrix validate`; the workflow itself
    does not ask, since its jobs may run on other hosts than the one that plans them)."""
    try:
        system_class(conf["type"]).check_programs(conf)
    except CrmatrixError as e:
        raise CrmatrixError(f"systems.{name}.{e}") from None


def answers_calls(conf: dict) -> bool:
    """Whether the system answers call-graph questions (see crmatrix.evaluation.callgraph)."""
    return system_class(conf["type"]).ANSWERS_CALLS


def needs_index(conf: dict) -> bool:
    """Whether the workflow must build an index for this system before evaluating it."""
    return bool(system_class(conf["type"]).needs_index(conf))


def index_env(conf: dict, env: dict[str, str]) -> dict[str, str]:
    """The arm variables an index build of this system sees: arms that agree on them share
    one index (the workflow's index key hashes them)."""
    return dict(sorted(system_class(conf["type"]).index_env(conf, env).items()))


def make_system(conf: dict, ctx: SystemContext) -> System:
    return system_class(conf["type"])(ctx)
