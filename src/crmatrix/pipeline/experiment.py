"""What a validated matrix config means for the DAG: the model and index each arm uses,
which arm builds each index, each arm's variables in their parsed form, and the plan of
one evaluation cell (`cell`).

The workflow and the CLI both ask these questions; answering them here keeps one answer.
"""

from __future__ import annotations

from dataclasses import dataclass

from crmatrix import CrmatrixError, atomic
from crmatrix.analysis import check
from crmatrix.corpora import views
from crmatrix.datasets import holdout
from crmatrix.datasets.registry import FORMATS
from crmatrix.engine import knobs
from crmatrix.engine.knobs import MODEL_VAR
from crmatrix.systems import codefiles, external, install
from crmatrix.systems import registry as systems
from crmatrix.systems.registry import needs_index

# splits made by crmatrix.datasets.splits (rule derive_split), not by crmatrix.datasets.holdout
DERIVED_SPLITS = ("structural",)
# What a system's config says to the DAG rather than to its jobs: which arms and datasets it
# runs, and what its environment holds (the job gets the environment itself, keyed by what it holds).
_DAG_KEYS = ("arms", "datasets", "install")


def arm_env(cfg: dict, arm: str) -> dict[str, str]:
    """The arm's variables as jobs get them: knob values in one spelling ("true" and "1" are
    one value), so respelling a knob changes no job parameter and re-runs nothing."""
    return knobs.canonical(cfg["arms"][arm])


def arm_model(cfg: dict, arm: str) -> str:
    return cfg["arms"][arm].get(MODEL_VAR, cfg["default_model"])


def index_knobs(cfg: dict, arm: str, corpus: str | None = None) -> dict:
    """What the builtin's index of the corpus is built from under the arm, as knob fields
    (`knobs.index_spec`): its index-time knobs resolved on the corpus's declared language, or
    the arm's explicit ones while they wait for the dominant language found by the fetch (also
    without a corpus of the config, as for `crmatrix run`). The index job gets exactly this."""
    language = cfg["corpora"][corpus].get("language") if corpus is not None else None
    return knobs.index_spec(cfg["arms"][arm], language)


def index_env(cfg: dict, system_conf: dict, arm: str) -> dict[str, str]:
    """The variables an external system's index is built with: those its `index_env` option
    lists (the builtin's index takes knob fields, `index_knobs`)."""
    return systems.index_env(system_conf, arm_env(cfg, arm))


def system_arms(cfg: dict, system_conf: dict) -> list[str]:
    """The arms a system takes part in, in config order (its `arms`, else every arm)."""
    own = system_conf.get("arms")
    return [a for a in cfg["arms"] if own is None or a in own]


def system_datasets(cfg: dict, system_conf: dict) -> list[str]:
    """The datasets a system runs on, sorted (its `datasets`, else every dataset)."""
    own = system_conf.get("datasets")
    return sorted(d for d in cfg["datasets"] if own is None or d in own)


def job_conf(system_conf: dict, models: dict | None = None) -> dict:
    """The system's settings as its jobs get them: without the arms and datasets it runs (no
    part of any one run) and its install (the job gets the environment, whose path holds its
    key); with the contents of the project files it runs (`systems.codefiles`), when it names
    any; with the definition of each model its `{model:NAME}` placeholders name (`models`: the
    config's), when it names any."""
    conf = {k: v for k, v in system_conf.items() if k not in _DAG_KEYS}
    files = code_files(system_conf)
    if files:
        conf[codefiles.FILES_KEY] = files
    named = model_defs(system_conf, models or {})
    return {**conf, MODELS_KEY: named} if named else conf


# Where a job's system settings hold the definitions of the models it names ({model:NAME}).
MODELS_KEY = "models"


def system_models(system_conf: dict, index_only: bool = False) -> list[str]:
    """The config's models an external system names as `{model:NAME}` (in its index command's
    templates only, with `index_only`): the workflow's export of each is an input of its jobs."""
    if not hasattr(systems.system_class(system_conf["type"]), "argvs"):  # not a command or mcp system
        return []
    return external.model_names(system_conf["options"], index_only)


def model_defs(system_conf: dict, models: dict, index_only: bool = False) -> dict[str, dict]:
    """NAME -> the config's definition of each model the system names: what its export, and so
    the job's result, depends on (its name and where it lies are no part of it)."""
    return {n: models[n] for n in system_models(system_conf, index_only)}


def code_files(system_conf: dict, index_only: bool = False) -> dict[str, str]:
    """Project path -> sha256 of the files an external system runs (all of them, or those of its
    index command, its `env` and `files`)."""
    cls = systems.system_class(system_conf["type"])
    if not hasattr(cls, "argvs"):  # not a command or mcp system: its code is the stage's or its plugin's
        return {}
    options = system_conf["options"]
    argvs = {"index": options.get("index")} if index_only else cls.argvs(options)
    return codefiles.hashes(options, argvs)


def index_conf(system_conf: dict, models: dict | None = None) -> dict:
    """The settings an external system's index job runs with: index-time ones only, so a
    query-time change (`timeout_s`, `budget_s`, the search argv or tool) re-runs no index; and
    the definitions of the models its index command names (`models`: the config's)."""
    options = system_conf["options"]
    conf = {"type": system_conf["type"],
            "options": {k: options[k] for k in (*_EXTERNAL_INDEX_OPTIONS, "index_env", "index_timeout_s")
                        if k in options}}
    named = model_defs(system_conf, models or {}, index_only=True)
    return {**conf, MODELS_KEY: named} if named else conf


def venv_dir(cfg: dict, system: str) -> str | None:
    """The environment the workflow installs for the system, if it names one."""
    conf = cfg["systems"][system].get("install")
    return install.venv_dir(system, conf) if conf else None


# What an external system's index command depends on, besides the arm's variables.
_EXTERNAL_INDEX_OPTIONS = ("index", "env", "pass_env", "cwd")


def index_key(cfg: dict, system_conf: dict, arm: str, corpus: str) -> str:
    """Arms whose indexes of the corpus would be built alike share one. The builtin's key
    hashes its index fields (`index_knobs`) and the model's definition, never the arm's or the
    model's name; an external system's, its index command and environment (by key) with the
    variables it sees."""
    if system_conf["type"] == "builtin":
        spec = {"knobs": index_knobs(cfg, arm, corpus), "model": cfg["models"][arm_model(cfg, arm)]}
    else:
        options = system_conf["options"]
        spec = {"type": system_conf["type"],
                "install": install.key(system_conf["install"]) if system_conf.get("install") else None,
                "options": {k: options.get(k) for k in _EXTERNAL_INDEX_OPTIONS},
                "env": index_env(cfg, system_conf, arm)}
        files = code_files(system_conf, index_only=True)
        if files:  # absent when none, so a system naming no project file keeps its key
            spec["files"] = files
        models = model_defs(system_conf, cfg.get("models") or {}, index_only=True)
        if models:  # likewise: a system naming no model keeps its key
            spec["models"] = models
    return atomic.hash_obj(spec)[:12]


def index_arms(cfg: dict, system_conf: dict, corpus: str) -> dict[str, str]:
    """Index key -> the first of the system's arms (in config order) with that key on the
    corpus; its model builds the index, and its knobs (`index_knobs`) or variables (`index_env`)."""
    out: dict[str, str] = {}
    for arm in system_arms(cfg, system_conf):
        out.setdefault(index_key(cfg, system_conf, arm, corpus), arm)
    return out


def needs_graph(cfg: dict, system: str, arm: str) -> bool:
    """Whether the builtin engine reads the corpus's graph under this arm: only when the arm
    expands over it, so a graph edit re-runs no arm that does not."""
    return cfg["systems"][system]["type"] == "builtin" and knobs.resolve(cfg["arms"][arm], None).graph_expand


def home_dir(root: str, system: str, where: dict[str, str]) -> str:
    """An external system's own HOME (a tool's caches and state): a directory per system, and
    in it one per index (`where`: corpus and index_key), so that the index job and the query
    jobs reading its index share it (a tool may keep its index under $HOME), else one per
    evaluation job (`where`: dataset and arm)."""
    return f"{root}/home/{system}/" + "/".join(f"{k}={v}" for k, v in sorted(where.items()))


@dataclass(frozen=True)
class Cell:
    """One evaluation (dataset × system × arm) as `stages.evaluate_arm.run` takes it: the
    files it reads (`inputs`: tasks, grep, dataset_file, tree, manifest, symbols; and as the
    system and arm need them index, model, query_vectors, graph, venv, system_models), the other arguments
    its result depends on (`params`: system_conf, env, top_k, split, home_dir), and where it
    writes (`outputs`: run, trec_dir). Each key is the stage's argument of that name."""

    dataset: str
    system: str
    arm: str
    corpus: str
    inputs: dict[str, str]
    params: dict
    outputs: dict[str, str]


def cell(cfg: dict, dataset: str, system: str, arm: str, root: str = "results") -> Cell:
    """The plan of one cell, its files under `root` (the workflow's results/; `crmatrix run`'s
    scratch directory), except a system's installed environment, which is where the workflow
    keeps it."""
    conf = cfg["systems"][system]
    corpus = cfg["datasets"][dataset]["corpus"]
    inputs = {
        "tasks": f"{root}/datasets/{dataset}.jsonl",
        "grep": f"{root}/tokenbench/{dataset}.json",
        "dataset_file": cfg["datasets"][dataset]["file"],
        "tree": f"{root}/corpora/{corpus}/tree",
        "manifest": f"{root}/corpora/{corpus}/manifest.json",
        "symbols": f"{root}/symbols/{corpus}.jsonl",
    }
    home = {"dataset": dataset, "arm": arm}
    if needs_index(conf):
        key = index_key(cfg, conf, arm, corpus)
        inputs["index"] = f"{root}/index/{corpus}/{system}/{key}"
        if conf["type"] == "builtin":
            model = arm_model(cfg, arm)
            inputs["model"] = f"{root}/models/{model}"
            inputs["query_vectors"] = f"{root}/queries/{dataset}/{model}"
        else:  # the index job's HOME (rule build_system_index), where a tool may keep its index
            home = {"corpus": corpus, "index_key": key}
    if needs_graph(cfg, system, arm):
        inputs["graph"] = f"{root}/graph/{corpus}.json"
    venv = venv_dir(cfg, system)
    if venv is not None:
        inputs["venv"] = venv
    named = system_models(conf)
    if named:  # the exports an external system's {model:NAME} name
        inputs["system_models"] = [f"{root}/models/{n}" for n in named]
    params = {"system_conf": job_conf(conf, cfg["models"]), "env": arm_env(cfg, arm), "top_k": cfg["top_k"],
              "split": dataset_split(cfg, dataset),
              "home_dir": home_dir(root, system, home)}
    outputs = {"run": f"{root}/runs/{dataset}/{system}/{arm}.json", "trec_dir": f"{root}/trec/{dataset}/{system}/{arm}"}
    return Cell(dataset, system, arm, corpus, inputs, params, outputs)


def retrieval_datasets(cfg: dict) -> list[str]:
    """The datasets of the phase matrix: every one but the call-graph edge sets."""
    return sorted(d for d, conf in cfg["datasets"].items() if not FORMATS.get(conf["format"]).callgraph)


def callgraph_datasets(cfg: dict) -> list[str]:
    return sorted(d for d, conf in cfg["datasets"].items() if FORMATS.get(conf["format"]).callgraph)


def matrix_formats(cfg: dict, datasets: list[str]) -> dict[str, dict]:
    """Each dataset's format as the matrix job gets it: the facts the matrix reads of it
    (`Format.matrix_facts`), so its key holds them and it runs none of the loaders' code."""
    return {d: FORMATS.get(cfg["datasets"][d]["format"]).matrix_facts() for d in datasets}


def derived_split(cfg: dict, dataset: str) -> str | None:
    """The split a dataset's tasks are derived by from its file's (structural), else None."""
    split = cfg["datasets"][dataset].get("split")
    return split if split in DERIVED_SPLITS else None


def dataset_split(cfg: dict, dataset: str) -> dict:
    """Which of the file's tasks a dataset holds, as its jobs get it: the split (absent: all)
    and the seed of a held-out split (crmatrix.datasets.holdout; None where it shuffles nothing), so a
    dataset without `seed:` and one with the default are one cache key."""
    conf = cfg["datasets"][dataset]
    split = conf.get("split", "all")
    seed = conf.get("seed", holdout.DEFAULT_SEED) if split in holdout.SPLITS and split != "all" else None
    return {"split": split, "seed": seed}


def dataset_source(cfg: dict, dataset: str) -> str:
    """The corpus a dataset's rows are read against: its own, or, for a derived dataset, the
    corpus its docs-withheld view is made of (whose symbols still have their docs)."""
    corpus = cfg["datasets"][dataset]["corpus"]
    return views.source(cfg["corpora"][corpus]) or corpus


def dataset_sample(cfg: dict, dataset: str) -> dict | None:
    """How many of the loader's tasks a derived dataset keeps, and the seed of its sample
    (crmatrix.datasets.holdout.sample); None for a dataset that keeps them all."""
    conf = cfg["datasets"][dataset]
    if "max_queries" not in conf:
        return None
    return {"max_queries": conf["max_queries"], "seed": conf.get("seed", holdout.DEFAULT_SEED)}


def split_ranker(cfg: dict, dataset: str) -> dict:
    """The dense ranker a structural split derives its tasks with: the baseline arm's semantic
    index of the first builtin system that builds one. Empty for a dataset without one."""
    if not derived_split(cfg, dataset):
        return {}
    builtins = [name for name, conf in cfg["systems"].items() if conf["type"] == "builtin" and needs_index(conf)]
    if not builtins:
        raise CrmatrixError(f"datasets.{dataset}.split: needs a builtin system with the semantic method "
                            "(its baseline-arm index ranks the split)")
    base = cfg["baseline_arm"]
    corpus = cfg["datasets"][dataset]["corpus"]
    return {"system": builtins[0], "index_key": index_key(cfg, cfg["systems"][builtins[0]], base, corpus),
            "model": arm_model(cfg, base),
            "env": arm_env(cfg, base)}


DEFAULT_MAX_DROP = 0.02  # of the headline method's mrr, when a `compare:` entry names no gate


def _side(cfg: dict, where: str, text: str) -> dict:
    """`SYSTEM` or `SYSTEM@ARM` as {system, arm} (default arm: the baseline arm)."""
    system, _, arm = text.partition("@")
    arm = arm or cfg["baseline_arm"]
    if system not in cfg["systems"]:
        raise CrmatrixError(f"{where}: {system!r} is not a system (known: {', '.join(sorted(cfg['systems']))})")
    arms = system_arms(cfg, cfg["systems"][system])
    if arm not in arms:
        raise CrmatrixError(f"{where}: system {system} does not take part in arm {arm!r} (its arms: {', '.join(arms)})")
    return {"system": system, "arm": arm}


def compare_pairs(cfg: dict) -> dict[str, dict]:
    """Each `compare:` entry resolved: release and candidate as {system, arm}, and the gates
    as METHOD.METRIC -> the largest drop allowed (default: the release's headline method's mrr)."""
    out = {}
    for name, entry in cfg["compare"].items():
        where = f"compare.{name}"
        release = _side(cfg, f"{where}.release", entry["release"])
        candidate = _side(cfg, f"{where}.candidate", entry["candidate"])
        if release == candidate:
            raise CrmatrixError(f"{where}: compares {entry['release']} with itself")
        methods = [cfg["systems"][s["system"]]["methods"] for s in (release, candidate)]
        headline = cfg["headline_method"] if cfg["headline_method"] in methods[0] else methods[0][0]
        max_drop = entry.get("max_drop") or {f"{headline}.mrr": DEFAULT_MAX_DROP}
        for gate_name, drop in max_drop.items():
            try:
                gate = check.parse_drop(f"{gate_name}={drop}")
            except CrmatrixError as e:
                raise CrmatrixError(f"{where}.max_drop: {e}") from None
            if not all(gate.method in m for m in methods):
                raise CrmatrixError(f"{where}.max_drop.{gate_name}: method {gate.method!r} is not one of both "
                                    f"systems' methods ({', '.join(m for m in methods[0] if m in methods[1])})")
        out[name] = {"release": release, "candidate": candidate, "max_drop": dict(max_drop)}
    return out
