"""The contract of a system under test: `System`, the base class every system type subclasses,
and `SystemContext`, what a job gives it. Its own module, so that a system type's code (and so
the code hash of the stages that run it) holds the contract alone, not every registered type."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from crmatrix import CrmatrixError
from crmatrix.hits import Hit
from crmatrix.symbols import Symbol
from crmatrix.systems.answers import Answer
from crmatrix.systems.guard import DEFAULT_TIMEOUT_S

if TYPE_CHECKING:
    from crmatrix.engine.knobs import ArmKnobs, Knobs


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
    store_dir: Path | None = None  # a repository's store of many commits (crmatrix.versions.store), for `select`
    graph_file: Path | None = None  # the corpus's reference graph (crmatrix.graph), when the job needs it
    home_dir: Path | None = None  # an external system's own HOME and caches (see sandbox)
    venv_dir: Path | None = None  # the virtual environment the system's `install` made (crmatrix.systems.install)
    system_models: dict[str, Path] = field(default_factory=dict)  # model name -> its export, for {model:NAME}
    timeout_s: float = DEFAULT_TIMEOUT_S  # per query; external systems enforce it on their process
    name: str = ""  # the system's name in the config, for messages
    methods: tuple[str, ...] | None = None  # the methods the job will ask for (None: any), so the rest go unloaded
    # the arm's knobs as the config layer parsed them (crmatrix.config.settings.KnobSpec); None: read from `env`
    knobs: ArmKnobs | None = None

    def arm_knobs(self) -> Knobs:
        """The arm's knobs on this corpus: auto gating follows its dominant language unless the
        arm names one. Parsed once, by the config layer, for a job the plan made; read from `env`
        here for a context made by hand (a notebook, a test)."""
        from crmatrix.corpora.languages import dominant_language
        from crmatrix.engine import knobs

        parsed = self.knobs if self.knobs is not None else knobs.read(self.env)
        return parsed.knobs(dominant_language(self.manifest))


class System:
    """The base of every system type: what the workflow asks of a type while it plans (class
    methods over the system's settings `spec`, a `crmatrix.config.settings.SystemSpec`, or its
    `options`), and what a job asks of an instance. Every optional member has its default here,
    so callers never probe for one.

    A type answers `search(query, method, k)` with hits or an `Answer`, and may raise
    `crmatrix.systems.answers.QueryFailure` to name the kind of failure. `RESPONSE = "blob"`:
    answers are one composed context, scored at rank 1 only. `SELF_TIMED`: it enforces
    `ctx.timeout_s` itself (the job's guard waits `grace_s` longer, default GRACE_S, so that the
    system reports its own timeout). `batch_size` with `search_batch(queries, method, k)`: tools that take
    many queries per call. `EMBEDS`: the type is crmatrix's own engine, whose index the workflow
    builds from the corpus's symbols with the arm's model (rule build_index, with the dataset's
    queries embedded once per model); any other type that `needs_index` builds it with its own
    index command (rule build_system_index). The flag is read here alone: what the workflow
    plans by it, it asks of `crmatrix_builds_index` and `embeds_with_arm_model`.
    `ANSWERS_CALLS`: it answers call-graph questions (`calls`, see crmatrix.evaluation.callgraph).
    `GRANULARITY`: what its hits name (`crmatrix.hits`: FILE, SYMBOL or SPAN; None: inferred from
    its answers), the default of `granularity(method)`.
    """

    METHODS: tuple[str, ...] = ()
    RESPONSE = "ranked"
    SELF_TIMED = False
    EMBEDS = False
    ANSWERS_CALLS = False
    GRANULARITY: str | None = None
    batch_size: int | None = None
    grace_s: float | None = None

    # -- what the workflow asks while it plans ---------------------------------------------

    @classmethod
    def methods_for(cls, options: dict) -> tuple[str, ...]:
        """The methods the type supports under these options (default: its fixed `METHODS`)."""
        return tuple(cls.METHODS)

    @classmethod
    def optional_methods(cls, options: dict) -> tuple[str, ...]:
        """Methods the type supports when a config names them, beyond those it runs by default."""
        return ()

    @classmethod
    def check_options(cls, options: dict) -> None:
        """Cross-key checks of the options the schema cannot express; an error's message starts
        with the option's key."""

    @classmethod
    def check_programs(cls, spec) -> None:
        """The programs the system runs are on this host (`crmatrix validate`)."""

    @classmethod
    def needs_index(cls, spec) -> bool:
        """Whether the workflow builds an index for the system before evaluating it."""
        return False

    @classmethod
    def crmatrix_builds_index(cls) -> bool:
        """Whether crmatrix builds its index (rule build_index: the corpus's symbols embedded with
        an arm's model) rather than its own index command (rule build_system_index)."""
        return cls.EMBEDS

    @classmethod
    def embeds_with_arm_model(cls, spec) -> bool:
        """Whether crmatrix embeds for it under these settings: an index of vectors built with the
        arm's model, and the dataset's queries embedded with it (the workflow prepares the model).
        Such a system's baseline-arm index is what ranks a structural split."""
        return cls.EMBEDS and cls.needs_index(spec)

    @classmethod
    def index_env(cls, spec, env: dict[str, str]) -> dict[str, str]:
        """The arm variables its index build sees: arms that agree on them share one index."""
        return {}

    @classmethod
    def index_spec(cls, spec, arm, language: str | None, models: dict) -> dict:
        """What its index of a corpus (whose declared language is given) is built from under
        the arm (`crmatrix.config.matrix.Arm`): arms with equal specs share the index, whose key
        hashes it. `models`: the config's model definitions."""
        return {"type": spec.type, "env": cls.index_env(spec, arm.env)}

    @classmethod
    def embedding_spec(cls, index_spec: dict) -> dict:
        """The part of an index spec (`index_spec`) that decides what its index embeds and how:
        two indexes of a corpus whose parts agree embed the same texts alike (the workflow builds
        one first, and the other reads its embeddings from the cache)."""
        return index_spec

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

    def select(self, corpus: str) -> list[Symbol] | None:
        """Switch to the version `corpus` names (a task's corpus: a repository's `NAME@COMMIT`,
        crmatrix.versions) and give its symbols; None: the system answers for the job's corpus
        alone. Every system is handed its version so: the builtin opens that version's engine
        (crmatrix.versions.engines), any other type on a repository is started on the version's
        tree (crmatrix.versions.commits)."""
        return None

    def search(self, query: str, method: str, k: int) -> list[Hit] | Answer:
        raise NotImplementedError

    def calls(self, direction: str, symbol: str, file_suffix: str | None) -> list[tuple[str, str]]:
        """(name, path) of the callers or callees of `symbol`, for a type that `ANSWERS_CALLS`."""
        raise CrmatrixError(f"system type {type(self).__name__} answers no call-graph questions")

    def listed_tools(self) -> list[dict] | None:
        """The tools the system offers its client, each {name, description, input_schema}, for
        a system that lists them (an MCP server's `tools/list`); None for one that does not."""
        return None

    def granularity(self, method: str) -> str | None:
        """What the method's hits name, FILE, SYMBOL or SPAN (`crmatrix.hits`): the option
        `granularity` when its config sets one, else `GRANULARITY`; None: the run infers it
        from the answers (crmatrix.evaluation.granularity.of)."""
        return self.ctx.options.get("granularity") or self.GRANULARITY

    def provenance(self) -> dict:
        """What the system ran with (its knobs, the model it embedded with), for the run's record."""
        return {}

    def close(self) -> None:
        """Run once at the end of the job."""
