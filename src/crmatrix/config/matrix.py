"""The matrix a config describes, as types: `Matrix` holds its corpora, datasets, systems,
models and arms, each resolved once (`crmatrix.config.resolve`) and checked
(`crmatrix.config.check`); nothing downstream reads the config's dict.

Every type is a frozen dataclass, and every dict and list it holds, however deep, is read-only
(`crmatrix.frozen`: a FrozenDict or FrozenList, which JSON, repr and `isinstance` see as a dict
and a list): a Matrix is made once per planning and never changed, and an arm's variables never
drift from its parsed knobs. What edits a value (`crmatrix.config.plan`, adding to a job's
settings) edits a copy (`frozen.thaw`); a job gets plain values (a frozen value pickles as one).
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from crmatrix.config.entries import ModelDef
from crmatrix.config.settings import SystemSpec
from crmatrix.corpora.candidates import repository_of
from crmatrix.engine.knobs import ArmKnobs
from crmatrix.frozen import freeze

# A dataset split by repository from a per-task-commit one: that one's name, under which the
# matrix pools its splits' queries (the benchmark's own figure, micro-averaged as the field reports).
POOLED_AS = "pooled_as"


class _Frozen:
    """A frozen dataclass whose fields are frozen as it is made (`crmatrix.frozen.freeze`)."""

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            object.__setattr__(self, f.name, freeze(getattr(self, f.name)))


@dataclass(frozen=True)
class Arm:
    """A named set of environment variables, read once: `knobs` holds them in one spelling,
    their parsed values and the clamp notes; `model` is the config's name of the model it
    embeds with (its CRMATRIX_MODEL, else the default model)."""

    name: str
    knobs: ArmKnobs
    model: str

    def __post_init__(self) -> None:
        # The engine's ArmKnobs is a frozen dataclass of plain dicts: the arm holds a copy with its
        # env and values frozen, copied rather than made anew (one ArmKnobs is made per reading).
        knobs = copy.copy(self.knobs)
        for name in ("env", "values"):
            object.__setattr__(knobs, name, freeze(getattr(knobs, name)))
        object.__setattr__(self, "knobs", knobs)

    @property
    def env(self) -> dict[str, str]:
        """The variables as jobs get them: each knob in its one spelling."""
        return self.knobs.env


@dataclass(frozen=True)
class Corpus(_Frozen):
    """A corpus entry: `conf` as validated (the pin and selection, a benchmark file's KIND spec,
    or a view's); `kind` says which rule makes its tree: `fetched` (fetch_corpus), `written`
    (write_corpus, out of a benchmark file by the format named `written_by`, whose key in
    `conf` is `written_kind`), `view` (withhold_docs, of corpus `view_of`), or `repository`:
    many commits of one repository (`repositories:`, conf `commits`), which rule
    fetch_repository gets and extract_repository makes one store of."""

    name: str
    conf: dict[str, Any]
    language: str | None
    kind: str
    view_of: str | None = None
    written_kind: str | None = None

    @property
    def written_file(self) -> str | None:
        """The benchmark file a written corpus is written out of."""
        return self.conf[self.written_kind]["file"] if self.written_kind else None


@dataclass(frozen=True)
class Dataset(_Frozen):
    """A dataset entry: `conf` as validated, with a derived dataset's view and rows filled in.
    `corpus` is the corpus it is scored on, `source` the one its rows are read against (a
    view's corpus, for a derived dataset); `split` which of the file's tasks it holds as its
    jobs get it ({split, seed}); `derived_split` the split its tasks are derived by from the
    file's (structural), else None; `sample` a derived dataset's {max_queries, seed}. A dataset
    of a repository's commits (rule localize_tasks) has its `repository` (`owner/name`), the
    `level` its gold is scored at, the `tasks` it keeps and a history's `history` options.
    `written`: its rows are the workflow's (a derived dataset's, a history's): its `file` is
    where its dataset stage writes them, which its runs read and hash, no input of the DAG."""

    name: str
    conf: dict[str, Any]
    format: str
    corpus: str
    source: str
    file: str
    callgraph: bool
    split: dict[str, Any]
    derived_split: str | None
    sample: dict[str, Any] | None
    repository: str | None = None
    level: str = "files"
    tasks: str = "all"
    history: dict[str, Any] | None = None
    written: bool = False

    @property
    def archetype(self) -> str | None:
        return self.conf.get("archetype")

    @property
    def note(self) -> str | None:
        return self.conf.get("note")

    @property
    def pooled_as(self) -> str | None:
        """The group this dataset's queries pool in with others in the matrix: the per-task-commit
        dataset it is a repository's split of, or a history's format and language; else None."""
        return self.conf.get(POOLED_AS)


@dataclass(frozen=True)
class SystemConfig(_Frozen):
    """A system entry: `conf` as validated with its options and methods filled in (what its jobs'
    parameters are made of, `crmatrix.config.plan`); `spec` its settings typed, which its type's
    class methods and its jobs read (`crmatrix.config.settings.SystemSpec`: its type, resolved to
    `cls`, which says what it needs); `arms` and `datasets` those it runs (config order; sorted);
    `venv` the environment the workflow installs for it, if it names one."""

    name: str
    conf: dict[str, Any]
    spec: SystemSpec
    arms: tuple[str, ...]
    datasets: tuple[str, ...]
    venv: str | None

    @property
    def cls(self) -> type:
        return self.spec.cls

    @property
    def type(self) -> str:
        return self.spec.type

    @property
    def methods(self) -> tuple[str, ...]:
        return self.spec.methods

    @property
    def options(self) -> dict[str, Any]:
        return self.spec.options

    @cached_property
    def needs_index(self) -> bool:
        return bool(self.cls.needs_index(self.spec))

    @cached_property
    def embeds_with_arm_model(self) -> bool:
        """Whether crmatrix embeds its index and queries with the arm's model (`System.embeds_with_arm_model`)."""
        return bool(self.cls.embeds_with_arm_model(self.spec))


@dataclass(frozen=True)
class Matrix(_Frozen):
    """The whole matrix, resolved and checked. `source`: the file(s) it was read from, for
    messages. `arms` in config order, a sweep's cells after the declared arms; `sweeps` each
    sweep's grid (axes and cells, `crmatrix.config.sweeps.grids`); `compare` each release /
    candidate pair resolved ({release, candidate: {system, arm}}, max_drop)."""

    source: str
    corpora: dict[str, Corpus]
    datasets: dict[str, Dataset]
    systems: dict[str, SystemConfig]
    models: dict[str, ModelDef]
    arms: dict[str, Arm]
    sweeps: dict[str, dict[str, Any]]
    compare: dict[str, dict[str, Any]]
    baseline_arm: str
    default_model: str
    headline_method: str
    reference_system: str
    comparisons: tuple[str, ...] | None
    top_k: int
    embed_threads: int
    cache_dir: str
    trackers: dict[str, dict[str, Any]]
    git_mirrors: tuple[str, ...]
    registries: dict[str, str]
    force_test: bool
    # per-task-commit dataset -> the repositories its rows name that the config does not declare,
    # with their rows (counted drops: no corpus holds them)
    undeclared: dict[str, dict[str, int]]

    @cached_property
    def retrieval_datasets(self) -> list[str]:
        """The datasets of the phase matrix: every one but the call-graph edge sets, sorted."""
        return freeze(sorted(d for d, ds in self.datasets.items() if not ds.callgraph))

    @cached_property
    def callgraph_datasets(self) -> list[str]:
        return freeze(sorted(d for d, ds in self.datasets.items() if ds.callgraph))

    @cached_property
    def split_datasets(self) -> list[str]:
        """The datasets whose tasks are derived from their file's (rule derive_split)."""
        return freeze(sorted(d for d, ds in self.datasets.items() if ds.derived_split))

    @cached_property
    def localized_datasets(self) -> list[str]:
        """The datasets of a repository corpus of many commits, each task at its own (rule localize_tasks)."""
        return freeze(sorted(d for d, ds in self.datasets.items() if self.corpora[ds.corpus].kind == "repository"))

    def corpora_of(self, kind: str) -> list[str]:
        """The corpora a rule makes (`Corpus.kind`), sorted."""
        return sorted(c for c, corpus in self.corpora.items() if corpus.kind == kind)

    def repository_priority(self, corpus: str) -> int:
        """The Snakemake priority of a repository's jobs (its fetch, store, indexes and tasks):
        the commits of all its stores (`REPOSITORY@RULE` shares its repository's), so the largest
        starts first. Its index builds are a run's longest chain (SWE-bench: sympy's two stores
        embed 81k texts, 940 s on one core, one after the other); started last, as Snakemake's
        preference for large inputs had it, they ran the last 330 s beside an idle core."""
        repository = repository_of(corpus)
        return sum(len(c.conf["commits"]) for name, c in self.corpora.items()
                   if c.kind == "repository" and repository_of(name) == repository)

    def system_datasets(self, system: str) -> list[str]:
        """The datasets of the phase matrix the system runs on, sorted."""
        own = set(self.systems[system].datasets)
        return [d for d in self.retrieval_datasets if d in own]
