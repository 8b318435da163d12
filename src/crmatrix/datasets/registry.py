"""The registry of dataset formats: `@register("name", **facts)` on a loader, or an entry point
in the group `crmatrix.datasets` naming a loader or a `Format`; `load` runs a format's loader
and counts its drops.

A format's facts live on its entry (`Format`), for what the rest of the pipeline asks of it:
whether the matrix treats its rows as hand-built, whether it reports pass@1, whether it is
the call-graph format, and which corpus kind it writes out of its benchmark file, with the
writer. The workflow reads them while it plans and hands a job the facts it needs, so a
job that needs no loader does not run (nor hash) the loaders' code.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from crmatrix import CrmatrixError
from crmatrix.datasets.tasks import Task
from crmatrix.registry import Registry
from crmatrix.symbols import Symbol

if TYPE_CHECKING:
    from crmatrix.config.entries import DatasetEntry, RepositoryEntry


@dataclass
class Loaded:
    """A format's tasks and the rows (or citations) it dropped, each `{row, reason, detail}`.
    `describe_gold`: what the format reports of its tasks' gold (SWE-QA: the gold files a name
    alone made gold), in the summary as `gold`."""

    tasks: list[Task]
    dropped: list[dict] = field(default_factory=list)
    describe_gold: Callable[[list[Task]], dict] | None = None

    def summary(self, fmt: str) -> dict:
        """What the dataset stage reports: counts of tasks, of drops by reason, and each drop."""
        reasons = Counter(d["reason"] for d in self.dropped)
        gold = {"gold": self.describe_gold(self.tasks)} if self.describe_gold else {}
        return {"format": fmt, "tasks": len(self.tasks), "dropped": len(self.dropped),
                "dropped_by_reason": dict(sorted(reasons.items())), **gold, "drops": self.dropped}


Loader = Callable[[Path, str, dict, list[Symbol]], "Loaded | list[Task]"]


@dataclass(frozen=True)
class Resolving:
    """What resolving a per-commit dataset reads beside its own entry: the config's datasets (the
    names a split must not take), its `repositories:` entries (`RepositoryEntry`: URL, `owner/name`
    as rows spell it, language), the cache directory, and the mirror directories — an explicit input: where the
    bundles are found, which no resolved entry holds, so a config resolves alike on every machine
    that has the bundles."""

    datasets: Mapping[str, dict]
    repositories: Mapping[str, RepositoryEntry]
    mirrors: tuple[str, ...]
    cache_dir: str | None


@dataclass
class PerCommit:
    """A per-commit dataset resolved by its format's hook (`Format.per_commit`).

    datasets    name -> resolved entry, each naming its `corpus` (a `repositories:` key), its
                `repository` (`owner/name`) and its `candidates` rule; a name other than the
                dataset's is one of its splits, pooled under the dataset's name
    commits     corpus -> the commits its tasks are at (the versions its store holds)
    undeclared  `owner/name` -> how many rows name a repository no `repositories:` entry declares
    fetch       what the corpus entry adds for fetching its store (a history's: `history: true`)
    pooled_as   the group the dataset's queries pool in beside other datasets (the matrix's
                pooled benchmarks), when it is not a split: a history's, its format and language
    """

    datasets: dict[str, dict] = field(default_factory=dict)
    commits: dict[str, set[str]] = field(default_factory=dict)
    undeclared: dict[str, int] = field(default_factory=dict)
    fetch: dict = field(default_factory=dict)
    pooled_as: str | None = None


# (dataset name, its config entry, typed, what else resolution reads) -> the dataset resolved
PerCommitHook = Callable[[str, "DatasetEntry", Resolving], PerCommit]
# (the corpora entry's KIND spec, with its `file`; an existing empty directory to lay the files
# out in) -> where they came from
CorpusWriter = Callable[[dict, Path], dict]


@dataclass(frozen=True)
class Format:
    """A dataset format: its loader and its facts.

    hand_built   rows written for this project (the seed's), not a public benchmark's: the
                 matrix shows no benchmark metrics (recall@k, nDCG) for them
    pass_at_1    reports pass@1, whether the first hit is the gold (RepoQA's headline)
    callgraph    gold call edges, scored by crmatrix.evaluation.callgraph, not in the phase matrix
    corpus_kind  the corpus kind written out of its benchmark file (a corpora entry
                 `KIND: {file, ...}`), by `write_corpus`; None: its corpora are fetched
    documents    the written-out corpus's files are documents, one symbol each (not source to parse)
    reads_tree   the loader reads the corpus's files too (keyword `tree`: the corpus as indexed),
                 not only its manifest and symbols (ds1000-library follows a library's imports)
    localization rows name their own repository and commit (SWE-bench): the workflow splits a
                 dataset by repository, each a store of many commits, prepares it with rule
                 localize_tasks, and the matrix reports the field's Acc@k beside recall and nDCG
    per_commit   the hook resolution calls for such a format: a dataset's rows -> the
                 repositories and commits they name (`PerCommit`); localization formats have it
    """

    name: str
    load: Loader
    hand_built: bool = False
    pass_at_1: bool = False
    callgraph: bool = False
    corpus_kind: str | None = None
    write_corpus: CorpusWriter | None = None
    documents: bool = False
    reads_tree: bool = False
    localization: bool = False
    per_commit: PerCommitHook | None = None

    def __post_init__(self):
        if self.localization != (self.per_commit is not None):
            raise CrmatrixError(f"dataset format {self.name}: localization and per_commit go together (a format "
                                "whose rows name their own commits says which, for resolution to split it)")
        if (self.corpus_kind is None) != (self.write_corpus is None) or (self.documents and not self.corpus_kind):
            raise CrmatrixError(f"dataset format {self.name}: corpus_kind and write_corpus go together, "
                                "and documents needs them")

    def matrix_facts(self) -> dict:
        """What the phase matrix reads of the format (its job gets them as a parameter)."""
        facts = {"name": self.name, "hand_built": self.hand_built, "pass_at_1": self.pass_at_1}
        return {**facts, "localization": True} if self.localization else facts  # absent: a key unchanged


def _format(name: str, obj, **facts) -> Format:
    """A registry entry from a decorated loader, or an entry point's loader or Format."""
    return replace(obj, name=name, **facts) if isinstance(obj, Format) else Format(name, obj, **facts)


def _builtin_formats() -> None:
    # Written out, not looped over names, so that crmatrix.codehash sees every format
    # module a dataset stage runs (an edit of one re-runs the dataset stages).
    from crmatrix.datasets import (  # noqa: F401 - they register themselves
        callgraph,
        codelens,
        derived,
        ds1000,
        ds1000_library,
        history,
        repoqa,
        swebench,
        sweqa,
    )


FORMATS: Registry[Format] = Registry("dataset format", "crmatrix.datasets", _builtin_formats, _format)
register = FORMATS.register


def corpus_kinds() -> list[str]:
    """The corpus kinds written out of a benchmark file, sorted."""
    return sorted(f.corpus_kind for f in FORMATS.entries().values() if f.corpus_kind)


def written_by(corpus: dict) -> Format | None:
    """The format whose benchmark file a corpora entry is written out of (by its KIND key);
    None for a fetched corpus (git, pypi, npm, path)."""
    found = [f for f in FORMATS.entries().values() if f.corpus_kind in corpus]
    return found[0] if found else None


def load_all(path: Path, fmt: str, corpus: str, manifest: dict, symbols: list[Symbol],
             tree: Path | None = None) -> Loaded:
    """The tasks and the dropped rows, with their reasons. `tree`: the corpus's files, for a
    format that reads them (`Format.reads_tree`)."""
    entry = FORMATS.get(fmt, str(path))
    if entry.reads_tree and tree is None:
        raise CrmatrixError(f"{path}: format {fmt} reads the files of corpus {corpus!r}, and no tree was given")
    extra = {"tree": Path(tree)} if entry.reads_tree else {}
    out = entry.load(Path(path), corpus, manifest, symbols, **extra)
    loaded = out if isinstance(out, Loaded) else Loaded(list(out))
    if not loaded.tasks:
        reasons = ", ".join(f"{n} {r}" for r, n in loaded.summary(fmt)["dropped_by_reason"].items())
        raise CrmatrixError(f"{path}: no task left for corpus {corpus!r}"
                            + (f" (dropped: {reasons})" if reasons else ""))
    return loaded


def load(path: Path, fmt: str, corpus: str, manifest: dict, symbols: list[Symbol],
         tree: Path | None = None) -> list[Task]:
    return load_all(path, fmt, corpus, manifest, symbols, tree).tasks
