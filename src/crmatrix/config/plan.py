"""What a Matrix means for the DAG: the files each job reads and writes under a root (the
workflow's results/, `crmatrix run`'s scratch directory) and the parameters its result depends
on. The workflow's input functions, targets and parameters are this module's answers (and
`crmatrix run` builds one cell from the same plan), so each question has one answer.

A job's parameters are its cache key (Snakemake re-runs a job whose parameters changed): they
hold what the result depends on and nothing else — never a name that only labels a thing (an
arm's, a model's) where its definition is what counts, never where a thing lies.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from pathlib import Path

from crmatrix import atomic
from crmatrix.config.matrix import Matrix, SystemConfig
from crmatrix.config.paths import ROOT, Layout
from crmatrix.config.settings import KnobSpec
from crmatrix.config.targets import Targets
from crmatrix.corpora import candidates
from crmatrix.embed.models import content_key
from crmatrix.evaluation.cell import CellJob
from crmatrix.frozen import thaw
from crmatrix.systems import codefiles, install

# What a system's config says to the DAG rather than to its jobs: which arms and datasets it
# runs, and what its environment holds (the job gets the environment itself, keyed by what it holds).
_DAG_KEYS = ("arms", "datasets", "install")
# Where a job's system settings hold the definitions of the models it names ({model:NAME}).
MODELS_KEY = "models"


class ModelKeys(Mapping):
    """NAME -> what a model's results depend on (`embed.models.content_key`: its definition, its
    files by their contents), each worked out when first asked: planning hashes only the models
    its jobs use, once."""

    def __init__(self, models: Mapping[str, dict]):
        self._models = models
        self._keys: dict[str, dict] = {}

    def __getitem__(self, name: str) -> dict:
        if name not in self._keys:
            self._keys[name] = content_key(self._models[name], f"models.{name}")
        return self._keys[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._models)

    def __len__(self) -> int:
        return len(self._models)


class Plan(Targets):
    """The DAG of a Matrix, its files under `root` (the targets that aggregate its runs: `Targets`)."""

    def __init__(self, matrix: Matrix, root: str = ROOT):
        self.matrix = matrix
        self.root = root
        self.paths = Layout(root)
        self._cells: dict[tuple[str, str, str], CellJob] = {}
        self._sha256: dict[str, str | None] = {}
        self._index_arms: dict[tuple[str, str], dict[str, str]] = {}
        self.model_keys = ModelKeys(matrix.models)

    # -- systems ---------------------------------------------------------------------------

    def job_conf(self, system: str) -> dict:
        """The system's settings as its jobs get them: without the arms and datasets it runs (no
        part of any one run) and its install (the job gets the environment, whose path holds its
        key); with the contents of the project files it runs (`systems.codefiles`), when it names
        any; with the definition of each model its `{model:NAME}` placeholders name, when it
        names any."""
        sc = self.matrix.systems[system]
        conf = {k: thaw(v) for k, v in sc.conf.items() if k not in _DAG_KEYS}
        files = sc.cls.code_files(sc.options)
        if files:
            conf[codefiles.FILES_KEY] = files
        named = self._model_defs(sc)
        return {**conf, MODELS_KEY: named} if named else conf

    def _model_defs(self, sc: SystemConfig, index_only: bool = False) -> dict[str, dict]:
        """NAME -> the key of each model the system names: what its export, and so the job's
        result, depends on (its name and where it lies are no part of it)."""
        return {n: self.model_keys[n] for n in sc.cls.model_names(sc.options, index_only)}

    def index_conf(self, system: str) -> dict:
        """The settings an external system's index job runs with (`ExternalSystem.index_conf`)."""
        sc = self.matrix.systems[system]
        return sc.cls.index_conf(sc.spec, self.model_keys)

    def system_models(self, system: str, index_only: bool = False) -> list[str]:
        """The exports (rule prepare_model) of the models a system's `{model:NAME}` name."""
        sc = self.matrix.systems[system]
        return [self.paths.file("model", model=n) for n in sc.cls.model_names(sc.options, index_only)]

    def home_dir(self, system: str, where: dict[str, str]) -> str:
        """An external system's own HOME (a tool's caches and state): a directory per system, and
        in it one per index (`where`: corpus and index_key), so that the index job and the query
        jobs reading its index share it (a tool may keep its index under $HOME), else one per
        evaluation job (`where`: dataset and arm)."""
        return self.paths.file("home", system=system) + "/" + "/".join(f"{k}={v}" for k, v in sorted(where.items()))

    def evaluate_minutes(self, system: str) -> int:
        """An evaluation's runtime bound (minutes): its system's `budget_s` on queries, plus
        loading (index, model, an MCP server's start) and the token benchmark. A scheduler
        kills a job at its runtime, so it follows the config instead of a guess."""
        return math.ceil(self.matrix.systems[system].spec.budget_s / 60) + 10

    def system_index_minutes(self, system: str) -> int:
        """An external index command's runtime bound (minutes): its `index_timeout_s`."""
        return math.ceil(self.matrix.systems[system].options["index_timeout_s"] / 60) + 5

    def system_index_commits_minutes(self, system: str, corpus: str) -> int:
        """The bound of an index job over a repository's trees: `index_timeout_s` for each of its
        commits (at most one tree each)."""
        n = len(self.matrix.corpora[corpus].conf.get("commits") or [None])
        return math.ceil(self.matrix.systems[system].options["index_timeout_s"] * n / 60) + 5

    def install_inputs(self, system: str) -> dict[str, str]:
        """An install's constraints file, when it names one (its contents are in the key)."""
        inst = self.matrix.systems[system].spec.install
        return {"constraints": inst.constraints} if inst is not None and inst.constraints else {}

    def venv_inputs(self, system: str) -> dict[str, str]:
        """The system's own environment as an input, for a system the workflow installs."""
        venv = self.matrix.systems[system].venv
        return {"venv": venv} if venv else {}

    def index_model_inputs(self, system: str) -> dict[str, list[str]]:
        """The model exports an external system's index command names as {model:NAME}."""
        named = self.system_models(system, index_only=True)
        return {"models": named} if named else {}

    # -- indexes ---------------------------------------------------------------------------

    def index_key(self, system: str, arm: str, corpus: str) -> str:
        """Arms whose indexes of the corpus would be built alike share one: the key hashes what
        the system's type says its index is built from (`System.index_spec`), and for a system
        that may run from an environment of its own, that environment (by its key)."""
        return atomic.hash_obj(self._index_spec(system, arm, corpus))[:12]

    def _index_spec(self, system: str, arm: str, corpus: str) -> dict:
        m, sc = self.matrix, self.matrix.systems[system]
        spec = sc.cls.index_spec(sc.spec, m.arms[arm], m.corpora[corpus].language, self.model_keys)
        if sc.cls.installable():
            spec["install"] = install.key(sc.spec.install) if sc.spec.install is not None else None
        return spec

    def embedded_first(self, system: str, corpus: str, index_key: str) -> dict[str, str]:
        """{"embedded_first": the index built before this one}, so that this one's embeddings
        are in the cache when it is built (two builds side by side each embed every text they
        share: sympy's, twice). The index it waits for: when this one's spec is more than what
        decides its embeddings (`System.embedding_spec`: an arm of BM25's tokenizer), the
        corpus's index of that part alone (the baseline's), if an arm has one; else, for a
        repository's store under another candidate rule (`REPOSITORY@RULE`, which shares most
        of its texts), the same index of the repository's store listed before it
        (`_store_before`); else none ({})."""
        cls = self.matrix.systems[system].cls
        spec = self._index_spec(system, self.index_arm(system, corpus, index_key), corpus)
        alike = cls.embedding_spec(spec)
        first = atomic.hash_obj(alike)[:12]  # the key of an arm of that part alone
        if alike != spec and first in self.index_arms(system, corpus):
            return {"embedded_first": self.paths.file("index", corpus=corpus, system=system, index_key=first)}
        before = self._store_before(system, corpus, index_key)
        if before is None:
            return {}
        return {"embedded_first": self.paths.file("index", corpus=before, system=system, index_key=index_key)}

    def _store_before(self, system: str, corpus: str, index_key: str) -> str | None:
        """The last of the stores of `corpus`'s repository sorted before it (the one named as the
        repository is first: `crmatrix.corpora.candidates.store`) whose index by the system has
        this key, when the index embeds; None for the first, or a corpus of no repository."""
        if not self.matrix.systems[system].embeds_with_arm_model or self.matrix.corpora[corpus].kind != "repository":
            return None
        repository = candidates.repository_of(corpus)
        stores = [c for c in self.matrix.corpora_of("repository") if candidates.repository_of(c) == repository]
        earlier = [c for c in stores[:stores.index(corpus)] if index_key in self.index_arms(system, c)]
        return earlier[-1] if earlier else None

    def index_arms(self, system: str, corpus: str) -> dict[str, str]:
        """Index key -> the first of the system's arms (in config order) with that key on the
        corpus; its model builds the index, and its knobs (`index_knobs`) or variables
        (`index_env`). Per corpus, since an arm gating by language resolves on the corpus's
        declared one and may share another arm's index there."""
        if (system, corpus) not in self._index_arms:
            out: dict[str, str] = {}
            for arm in self.matrix.systems[system].arms:
                out.setdefault(self.index_key(system, arm, corpus), arm)
            self._index_arms[system, corpus] = out
        return self._index_arms[system, corpus]

    def index_arm(self, system: str, corpus: str, index_key: str) -> str:
        return self.index_arms(system, corpus)[index_key]

    def index_knobs(self, system: str, corpus: str, index_key: str) -> dict:
        """What the builtin's index of the corpus is built from, as knob fields
        (`ArmKnobs.index_spec`): its index-time knobs resolved on the corpus's declared language,
        or the arm's explicit ones while they wait for the dominant language found by the fetch.
        The index job gets exactly this."""
        arm = self.matrix.arms[self.index_arm(system, corpus, index_key)]
        return arm.knobs.index_spec(self.matrix.corpora[corpus].language)

    def index_env(self, system: str, corpus: str, index_key: str) -> dict[str, str]:
        """The variables an external system's index is built with: those its `index_env` option
        lists (the builtin's index takes knob fields, `index_knobs`)."""
        sc = self.matrix.systems[system]
        arm = self.matrix.arms[self.index_arm(system, corpus, index_key)]
        return dict(sorted(sc.cls.index_env(sc.spec, arm.env).items()))

    def index_model(self, system: str, corpus: str, index_key: str) -> str:
        """The prepared model the builtin's index is embedded with: its first arm's."""
        return self.paths.file("model", model=self.matrix.arms[self.index_arm(system, corpus, index_key)].model)

    def embedding_systems(self) -> list[str]:
        """The systems whose indexes crmatrix builds itself (rule build_index)."""
        return [s for s, sc in self.matrix.systems.items() if sc.cls.crmatrix_builds_index()]

    def command_index_systems(self) -> list[str]:
        """The systems whose indexes their own command builds (rule build_system_index)."""
        return [s for s, sc in self.matrix.systems.items() if not sc.cls.crmatrix_builds_index()]

    # -- one evaluation --------------------------------------------------------------------

    def cell(self, dataset: str, system: str, arm: str) -> CellJob:
        """The plan of one cell, its files under the root, except a system's installed
        environment, which is where the workflow keeps it."""
        key = (dataset, system, arm)
        if key not in self._cells:
            self._cells[key] = self._cell(dataset, system, arm)
        return self._cells[key]

    def _cell(self, dataset: str, system: str, arm: str) -> CellJob:
        m, at = self.matrix, self.paths.file
        sc, ds = m.systems[system], m.datasets[dataset]
        corpus = ds.corpus
        inputs: dict[str, str | list[str]] = {"tasks": at("tasks", dataset=dataset), "dataset_file": ds.file}
        repository = m.corpora[corpus].kind == "repository"
        if repository:  # every commit: its store, and the system selects each
            inputs.update(self.repository_inputs(corpus))
        else:
            inputs.update({"grep": at("grep", dataset=dataset), "tree": at("tree", corpus=corpus),
                           "manifest": at("manifest", corpus=corpus), "symbols": at("symbols", corpus=corpus)})
        home = {"dataset": dataset, "arm": arm}
        # crmatrix's engine searches a repository through its index, with vectors or without
        if sc.needs_index or (repository and sc.cls.crmatrix_builds_index()):
            key = self.index_key(system, arm, corpus)
            inputs["index"] = at("index", corpus=corpus, system=system, index_key=key)
            if sc.embeds_with_arm_model:
                model = m.arms[arm].model
                inputs["model"] = at("model", model=model)
                inputs["query_vectors"] = at("queries", dataset=dataset, model=model)
            elif not sc.cls.crmatrix_builds_index():
                # the index job's HOME (rule build_system_index), where a tool may keep its index
                home = {"corpus": corpus, "index_key": key}
        if sc.cls.reads_graph(m.arms[arm]):
            inputs["graph"] = at("graph", corpus=corpus)
        if sc.venv is not None:
            inputs["venv"] = sc.venv
        named = self.system_models(system)
        if named:
            inputs["system_models"] = named
        params = {"system_conf": self.job_conf(system), "env": dict(m.arms[arm].env),
                  "knobs": self.knob_spec(arm), "top_k": m.top_k,
                  "split": dict(ds.split), "home_dir": self.home_dir(system, home),
                  "dataset_sha256": self.dataset_sha256(dataset)}
        outputs = {"run": at("run", dataset=dataset, system=system, arm=arm),
                   "trec_dir": at("trec", dataset=dataset, system=system, arm=arm)}
        return CellJob(dataset, system, arm, inputs, params, outputs)

    def knob_spec(self, arm: str) -> dict:
        """The arm's knobs as a job gets them: parsed once, here (`KnobSpec`), never again by the job."""
        return KnobSpec.of(self.matrix.arms[arm].knobs).to_json()

    def cell_inputs(self, dataset: str, system: str, arm: str) -> dict[str, str]:
        """A cell's run, and the baseline's run of its dataset and system to compare it with (the
        baseline's own cell has none)."""
        inputs = {"run": self.paths.file("run", dataset=dataset, system=system, arm=arm)}
        if arm != self.matrix.baseline_arm:
            inputs["base"] = self.paths.file("run", dataset=dataset, system=system, arm=self.matrix.baseline_arm)
        return inputs

    def matrix_format(self, dataset: str) -> dict:
        """The dataset's format as the matrix jobs get it: the facts the matrix reads of it
        (`Format.matrix_facts`), so their keys hold them and they run none of the loaders' code."""
        from crmatrix.datasets.registry import FORMATS

        return FORMATS.get(self.matrix.datasets[dataset].format).matrix_facts()

    # -- corpora and datasets --------------------------------------------------------------

    # Content keys. Snakemake sees a file's mtime, never its bytes: a dataset file replaced by an
    # older copy (`cp -p`, a checkout of an older revision, `touch -r`) is older than the outputs
    # made from the newer one, and nothing would re-run. So every job reading a file the config
    # names has that file's sha256 as a parameter, hashed once per planning however many jobs read it.
    def file_sha256(self, path: str) -> str | None:
        """The file's sha256; None for a missing one (Snakemake reports it as a missing input)."""
        if path not in self._sha256:
            self._sha256[path] = atomic.sha256_file(Path(path)) if Path(path).is_file() else None
        return self._sha256[path]

    def dataset_sha256(self, dataset: str) -> str | None:
        """The dataset's file's sha256; None for a derived or history dataset, whose file the
        workflow writes (`Dataset.written`)."""
        ds = self.matrix.datasets[dataset]
        return None if ds.written else self.file_sha256(ds.file)

    def written_sha256(self, corpus: str) -> str | None:
        """The sha256 of the benchmark file a written corpus is written out of."""
        return self.file_sha256(self.matrix.corpora[corpus].written_file)

    def corpus_params(self, corpus: str) -> dict:
        """The pin and selection; a path corpus adds a fingerprint of its files so edits re-run
        it. A corpus written out of a benchmark file gets the file as an input
        (`Corpus.written_file`), so its parameters hold what is taken from it, never where it lies."""
        from crmatrix.corpora.pins import path_fingerprint

        c = self.matrix.corpora[corpus]
        conf = thaw(c.conf)
        if "path" in conf:
            conf["fingerprint"] = path_fingerprint(conf["path"])
        if c.written_kind is not None:
            conf[c.written_kind] = {k: v for k, v in conf[c.written_kind].items() if k != "file"}
        return conf

    def repository_inputs(self, corpus: str) -> dict[str, str]:
        """A repository corpus's commits (rule fetch_repository) and its store of their symbols
        (rule extract_repository)."""
        return {kind: self.paths.file(kind, corpus=corpus) for kind in ("repository", "store")}

    def repository_index_inputs(self, system: str, corpus: str, index_key: str) -> dict[str, str]:
        """A repository's commits and store, and the prepared model the builtin's index of it
        embeds with, unless the system ranks by no vectors: its index then holds none, and no
        model is prepared for it (rule build_repository_index); after the index whose embeddings
        it reads (`embedded_first`)."""
        inputs = self.repository_inputs(corpus)
        if self.matrix.systems[system].embeds_with_arm_model:
            inputs["model"] = self.index_model(system, corpus, index_key)
        return {**inputs, **self.embedded_first(system, corpus, index_key)}

    def index_inputs(self, system: str, corpus: str, index_key: str) -> dict[str, str]:
        """A tree corpus's symbols and manifest, and the prepared model its index embeds with
        (rule build_index), after the index whose embeddings it reads (`embedded_first`)."""
        at = self.paths.file
        return {"symbols": at("symbols", corpus=corpus), "manifest": at("manifest", corpus=corpus),
                "model": self.index_model(system, corpus, index_key),
                **self.embedded_first(system, corpus, index_key)}

    def localize_inputs(self, dataset: str) -> dict[str, str]:
        """A per-task-commit dataset's file (a history's rows come from its store) and its
        repository (rule localize_tasks)."""
        ds = self.matrix.datasets[dataset]
        return {**({} if ds.written else {"file": ds.file}), **self.repository_inputs(ds.corpus)}

    def indexes_files(self, system: str) -> bool:
        """Whether the system's index of a repository holds its files as documents (a file method)."""
        from crmatrix.engine.methods import FILE_METHODS

        return bool(set(FILE_METHODS) & set(self.matrix.systems[system].methods))

    def dataset_inputs(self, dataset: str) -> dict[str, str]:
        """A dataset's file, and the manifest and symbols of the corpus it is read against (and
        its tree, for a format that reads the files); a derived dataset's file is that corpus's
        symbols, which it derives its rows from."""
        from crmatrix.datasets.registry import FORMATS

        ds, at = self.matrix.datasets[dataset], self.paths.file
        symbols = at("symbols", corpus=ds.source)
        return {
            "file": symbols if ds.source != ds.corpus else ds.file,
            "manifest": at("manifest", corpus=ds.source),
            "symbols": symbols,
            **({"tree": at("tree", corpus=ds.source)} if FORMATS.get(ds.format).reads_tree else {}),
        }

    def split_ranker(self, dataset: str) -> dict:
        """The dense ranker a structural split derives its tasks with: the baseline arm's semantic
        index of the first system crmatrix embeds for. Empty for a dataset without one."""
        m = self.matrix
        if not m.datasets[dataset].derived_split:
            return {}
        system = next(s for s, sc in m.systems.items() if sc.embeds_with_arm_model)  # config.check: there is one
        base, corpus = m.arms[m.baseline_arm], m.datasets[dataset].corpus
        return {"system": system, "index_key": self.index_key(system, base.name, corpus), "model": base.model,
                "knobs": self.knob_spec(base.name)}

    def split_inputs(self, dataset: str) -> dict[str, str]:
        """A split dataset's file, its corpus's symbols and graph, and the dense ranker's index."""
        corpus, at = self.matrix.datasets[dataset].corpus, self.paths.file
        ranker = self.split_ranker(dataset)
        return {
            "file": self.matrix.datasets[dataset].file,
            "manifest": at("manifest", corpus=corpus),
            "symbols": at("symbols", corpus=corpus),
            "graph": at("graph", corpus=corpus),
            "index": at("index", corpus=corpus, system=ranker["system"], index_key=ranker["index_key"]),
            "model": at("model", model=ranker["model"]),
        }
