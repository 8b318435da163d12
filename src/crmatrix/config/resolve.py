"""A config, with the schema's defaults filled in, resolved into a `Matrix`: what the config
implies is made explicit here, once — a sweep's cells become arms, a derived dataset's
docs-withheld view becomes a corpus, each arm's variables are read (`knobs.read`, the one
parse of an arm), each system's type resolved with its methods filled in, the reference
system and the release/candidate pairs named. What cannot be resolved is an error naming the
key; the cross-references a resolved Matrix must satisfy are `crmatrix.config.check`'s.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable

from crmatrix import CrmatrixError, did_you_mean
from crmatrix.analysis import check as run_check
from crmatrix.config import paths, sweeps
from crmatrix.config.entries import DatasetEntry, ModelDef, RepositoryEntry
from crmatrix.config.matrix import POOLED_AS, Arm, Corpus, Dataset, Matrix, SystemConfig
from crmatrix.config.settings import SystemSpec, check_system
from crmatrix.corpora import candidates, views
from crmatrix.datasets import derived, holdout
from crmatrix.datasets.registry import FORMATS, Resolving, written_by
from crmatrix.engine import knobs
from crmatrix.engine.knobs import MODEL_VAR
from crmatrix.systems import install
from crmatrix.systems.registry import default_reference

# splits made by crmatrix.datasets.splits (rule derive_split), not by crmatrix.datasets.holdout
DERIVED_SPLITS = ("structural",)
# the method whose mrr fills the phase matrix when the config names none (a system without it
# shows its first method)
DEFAULT_HEADLINE = "hybrid"
DEFAULT_MAX_DROP = 0.02  # of the headline method's mrr, when a `compare:` entry names no gate
# A corpus of many commits of one repository (`repositories:`), made from a per-task-commit
# dataset's rows: its entry's key for the repository's `owner/name`.
REPOSITORY = "repository"
CANDIDATES = "candidates"  # a swe-bench dataset's candidate rule (crmatrix.corpora.candidates), its repository's too


def mirrors(cfg: dict, machine: list[str]) -> list[str]:
    """The mirror directories a config is resolved with: its `git_mirrors`, then the machine's
    (`crmatrix.pipeline.locations.mirrors`), each once."""
    return list(dict.fromkeys([*cfg["git_mirrors"], *machine]))


def resolve(cfg: dict, source: str = "config", mirror_dirs: Iterable[str] = ()) -> Matrix:
    """The Matrix of a config the schema accepted (`schema.apply`); `cfg` is left as it is.
    `source`: the file(s) it was read from, named by every error; `mirror_dirs`: where the
    per-commit formats find their bundles (`mirrors`), read, never resolved into the Matrix: a
    config resolves alike wherever its bundles lie."""
    try:
        return _resolve(copy.deepcopy(cfg), source, list(mirror_dirs))
    except CrmatrixError as e:
        raise CrmatrixError(f"{source}: {e}") from None


def _resolve(cfg: dict, source: str, mirror_dirs: list[str]) -> Matrix:
    # the cells become arms before anything names an arm, so comparisons and systems may name them
    arm_envs = {**cfg["arms"], **sweeps.expand(cfg)}
    if cfg["baseline_arm"] not in arm_envs:
        raise CrmatrixError(f"baseline_arm: {cfg['baseline_arm']!r} is not one of the arms ({', '.join(arm_envs)})")
    arms = {name: _arm(name, env, cfg["default_model"]) for name, env in arm_envs.items()}
    corpora_conf = dict(cfg["corpora"])
    datasets = {}
    dataset_confs, repositories, undeclared = _per_commit(cfg, mirror_dirs)
    corpora_conf.update(repositories)
    for name, conf in dataset_confs.items():
        FORMATS.get(conf["format"], f"datasets.{name}.format")
        if conf["corpus"] not in corpora_conf:
            raise CrmatrixError(f"datasets.{name}.corpus: names corpus {conf['corpus']!r}, which is not in corpora "
                                f"(known: {', '.join(sorted(cfg['corpora']))})")
        written = "file" not in conf  # its rows are the workflow's: a derived dataset's, a history's
        if conf["format"] == derived.FORMAT:
            conf = _derive(name, conf, corpora_conf)
        elif written:  # rows its format's hook derives, where rule localize_tasks writes them
            conf = {**conf, "file": paths.Layout().file("tasks", dataset=name)}
        datasets[name] = _dataset(name, conf, corpora_conf, written)
    systems = {name: _system(name, conf, arm_envs, cfg["baseline_arm"], sorted(datasets))
               for name, conf in cfg["systems"].items()}
    headline = cfg.get("headline_method", DEFAULT_HEADLINE)
    if "headline_method" in cfg:
        _check_headline(headline, systems)
    reference = cfg.get("reference_system")
    if reference is not None and reference not in systems:
        raise CrmatrixError(f"reference_system: {reference!r} is not one of the systems ({', '.join(systems)})")
    return Matrix(
        source=source, corpora={name: _corpus(name, conf) for name, conf in corpora_conf.items()},
        datasets=datasets, systems=systems, arms=arms,
        models={n: ModelDef.from_conf(d, f"models.{n}") for n, d in cfg["models"].items()}, sweeps=sweeps.grids(cfg),
        compare={name: _pair(systems, cfg["baseline_arm"], headline, name, entry)
                 for name, entry in cfg["compare"].items()},
        baseline_arm=cfg["baseline_arm"], default_model=cfg["default_model"], headline_method=headline,
        reference_system=reference or default_reference({s: c.spec for s, c in systems.items()}),
        comparisons=tuple(cfg["comparisons"]) if cfg.get("comparisons") else None, top_k=cfg["top_k"],
        embed_threads=cfg["embed_threads"], cache_dir=cfg["cache_dir"], trackers=cfg["trackers"],
        git_mirrors=tuple(cfg["git_mirrors"]), registries=cfg["registries"],
        # Snakemake passes `--config` values as strings, but for True and False
        force_test=cfg["force_test"] in (True, "true"), undeclared=undeclared)


def _per_commit(cfg: dict, mirrors: list[str]) -> tuple[dict[str, dict], dict[str, dict], dict[str, dict[str, int]]]:
    """The datasets of the config, each of a per-commit format (`Format.per_commit`: its rows
    name their own repository and commit) resolved by its format's hook, in the config's place;
    each repository they name as a corpus (`repository:`, a version per commit); and per dataset
    the rows of repositories the config does not declare, counted by repository. `mirrors`:
    where the hooks find the bundles, no part of what they resolve."""
    for key in cfg["repositories"]:
        if candidates.STORE_SEP in key:
            raise CrmatrixError(f"repositories.{key}: a repository's name holds no {candidates.STORE_SEP!r} (the "
                                "stores of its other candidate rules are named REPOSITORY@RULE)")
    repositories = {key: RepositoryEntry(conf["git"], _repo_name(key, conf), conf.get("language"))
                    for key, conf in cfg["repositories"].items()}
    resolving = Resolving(cfg["datasets"], repositories, tuple(mirrors), cfg.get("cache_dir"))
    datasets, commits, fetch, rules, undeclared = {}, {}, {}, {}, {}
    for name, conf in cfg["datasets"].items():
        hook = FORMATS.get(conf["format"], f"datasets.{name}.format").per_commit
        if hook is None:
            _check_one_commit(name, conf)
            datasets[name] = conf
            continue
        got = hook(name, DatasetEntry.from_conf(conf), resolving)
        if got.undeclared:
            undeclared[name] = got.undeclared
        for split, split_conf in got.datasets.items():
            pool = name if split != name else got.pooled_as
            datasets[split] = {**split_conf, POOLED_AS: pool} if pool else split_conf
            rules[split_conf["corpus"]] = split_conf[CANDIDATES]  # one per store, by its name
        for corpus, asked in got.commits.items():
            if corpus in cfg["corpora"]:
                raise CrmatrixError(f"repositories.{corpus}: also a corpus of corpora; rename one of them")
            if fetch.setdefault(corpus, got.fetch) != got.fetch:
                raise CrmatrixError(f"repositories.{corpus}: datasets of formats that fetch its store differently "
                                    f"name it ({name}: {got.fetch or 'its commits'}); declare it again under "
                                    "another name for one of them")
            commits.setdefault(corpus, set()).update(asked)
    corpora = {}
    for corpus, asked in sorted(commits.items()):
        key = candidates.repository_of(corpus)
        conf = cfg["repositories"][key]
        corpora[corpus] = {**conf, REPOSITORY: _repo_name(key, conf), CANDIDATES: rules[corpus],
                           "commits": sorted(asked), **fetch[corpus]}
    return datasets, corpora, undeclared


def _check_one_commit(name: str, conf: dict) -> None:
    """A dataset of a format scored on its corpus's one version names none of a per-commit one's keys."""
    for key, what in ((CANDIDATES, "chooses its candidate files (format {} ranks its corpus's)"),
                      ("tasks", "keeps the tasks that edit a function (format {} has no function gold)")):
        if key in conf:
            raise CrmatrixError(f"datasets.{name}.{key}: only a swe-bench or history dataset "
                                + what.format(conf["format"]))
    for key in (REPOSITORY, "history"):
        if key in conf:
            raise CrmatrixError(f"datasets.{name}.{key}: only a history dataset (format: history) has it")


def _repo_name(name: str, conf: dict) -> str:
    """A repository's `owner/name` as rows spell it: its `name:`, else its URL's last two parts."""
    from crmatrix.corpora.pins.git import bundle_stem

    return conf.get("name") or bundle_stem(conf["git"]).replace("+", "/")


def _arm(name: str, env: dict[str, str], default_model: str) -> Arm:
    try:
        read = knobs.read(env)
    except CrmatrixError as e:
        raise CrmatrixError(f"arms.{name}: {e}") from None
    return Arm(name, read, read.env.get(MODEL_VAR, default_model))


def _corpus(name: str, conf: dict) -> Corpus:
    view_of = _view_of(conf)
    fmt = written_by(conf)
    kind = ("view" if view_of else REPOSITORY if REPOSITORY in conf else "written" if fmt is not None
            else "fetched")
    return Corpus(name, conf, conf.get("language"), kind, view_of, fmt.corpus_kind if fmt else None)


def _view_of(conf: dict) -> str | None:
    """The corpus a corpus entry is a docs-withheld view of, None for a corpus of its own."""
    return conf.get(views.NODOCS)


def _derive(name: str, conf: dict, corpora: dict) -> dict:
    """A derived dataset is scored on its corpus's docs-withheld view (crmatrix.corpora.views),
    which becomes a corpus of the matrix, once for every derived dataset of that corpus; the
    dataset names the view as its corpus, and its rows as its file."""
    where, corpus = f"datasets.{name}", conf["corpus"]
    if "file" in conf:
        raise CrmatrixError(f"{where}.file: a derived dataset reads no file (its queries come from the leading "
                            f"docs of corpus {corpus!r})")
    if conf.get("split") == "structural":
        raise CrmatrixError(f"{where}.split: structural swaps the gold of a dataset file's rows; a derived "
                            "dataset has none (dev, test, small_dev or small_test split it)")
    written = written_by(corpora[corpus])
    if written is not None and written.documents:
        raise CrmatrixError(f"{where}.corpus: corpus {corpus!r} is a documents corpus ({written.corpus_kind}), "
                            "no source the symbol extractor parses: it has no leading docs to derive queries from")
    view = views.view_name(corpus)
    corpora.setdefault(view, views.view_conf(corpus, corpora[corpus].get("language")))
    return {**conf, "max_queries": conf.get("max_queries", derived.DEFAULT_MAX_QUERIES), "corpus": view,
            # its rows, where the dataset stage writes its tasks: what runs' provenance hashes as its file
            "file": paths.Layout().file("tasks", dataset=name)}


def _dataset(name: str, conf: dict, corpora: dict, written: bool) -> Dataset:
    split = conf.get("split", "all")
    seed = conf.get("seed", holdout.DEFAULT_SEED) if split in holdout.SPLITS and split != "all" else None
    sample = ({"max_queries": conf["max_queries"], "seed": conf.get("seed", holdout.DEFAULT_SEED)}
              if "max_queries" in conf else None)
    return Dataset(
        name=name, conf=conf, format=conf["format"], corpus=conf["corpus"],
        source=_view_of(corpora[conf["corpus"]]) or conf["corpus"], file=conf["file"],
        callgraph=FORMATS.get(conf["format"]).callgraph,
        # a dataset without `seed:` and one with the default are one cache key
        split={"split": split, "seed": seed},
        derived_split=split if split in DERIVED_SPLITS else None, sample=sample,
        repository=conf.get(REPOSITORY), level=conf.get("level", "files"), tasks=conf.get("tasks", "all"),
        history=conf.get("history"), written=written)


def _system(name: str, conf: dict, arms: dict, baseline_arm: str, datasets: list[str]) -> SystemConfig:
    conf = check_system(name, conf)
    spec = SystemSpec.from_conf(conf, f"systems.{name}")
    if spec.install is not None:
        install.check(f"systems.{name}.install", spec.install)
    for key, known in (("arms", list(arms)), ("datasets", datasets)):
        unknown = [x for x in conf.get(key) or [] if x not in known]
        if unknown:
            raise CrmatrixError(f"systems.{name}.{key}: {', '.join(map(repr, unknown))} not among the {key} "
                                f"({', '.join(known)})")
    own_arms = conf.get("arms")
    if own_arms is not None and baseline_arm not in own_arms:
        raise CrmatrixError(f"systems.{name}.arms: expected the baseline arm {baseline_arm!r} among them "
                            "(every other arm is compared with it)")
    own_datasets = conf.get("datasets")
    return SystemConfig(
        name=name, conf=conf, spec=spec,
        arms=tuple(a for a in arms if own_arms is None or a in own_arms),
        datasets=tuple(d for d in datasets if own_datasets is None or d in own_datasets),
        venv=install.venv_dir(name, spec.install) if spec.install is not None else None)


def _check_headline(headline: str, systems: dict[str, SystemConfig]) -> None:
    """A headline method the config names is one some system has: a misspelt one would leave
    every row on its system's first method without a word."""
    methods = list(dict.fromkeys(m for s in systems.values() for m in s.methods))
    if headline not in methods:
        raise CrmatrixError(f"headline_method: {headline!r} is no system's method "
                            f"({did_you_mean(headline, methods)}the systems' methods: {', '.join(methods)})")


def _side(systems: dict[str, SystemConfig], baseline_arm: str, where: str, text: str) -> dict:
    """`SYSTEM` or `SYSTEM@ARM` as {system, arm} (default arm: the baseline arm)."""
    system, _, arm = text.partition("@")
    arm = arm or baseline_arm
    if system not in systems:
        raise CrmatrixError(f"{where}: {system!r} is not a system (known: {', '.join(sorted(systems))})")
    arms = systems[system].arms
    if arm not in arms:
        raise CrmatrixError(f"{where}: system {system} does not take part in arm {arm!r} (its arms: {', '.join(arms)})")
    return {"system": system, "arm": arm}


def _pair(systems: dict[str, SystemConfig], baseline_arm: str, headline_method: str, name: str, entry: dict) -> dict:
    """A `compare:` entry resolved: release and candidate as {system, arm}, and the gates as
    METHOD.METRIC -> the largest drop allowed (default: the release's headline method's mrr)."""
    where = f"compare.{name}"
    release = _side(systems, baseline_arm, f"{where}.release", entry["release"])
    candidate = _side(systems, baseline_arm, f"{where}.candidate", entry["candidate"])
    if release == candidate:
        raise CrmatrixError(f"{where}: compares {entry['release']} with itself")
    methods = [systems[s["system"]].methods for s in (release, candidate)]
    headline = headline_method if headline_method in methods[0] else methods[0][0]
    max_drop = entry.get("max_drop") or {f"{headline}.mrr": DEFAULT_MAX_DROP}
    for gate_name, drop in max_drop.items():
        try:
            gate = run_check.parse_drop(f"{gate_name}={drop}")
        except CrmatrixError as e:
            raise CrmatrixError(f"{where}.max_drop: {e}") from None
        if not all(gate.method in m for m in methods):
            raise CrmatrixError(f"{where}.max_drop.{gate_name}: method {gate.method!r} is not one of both "
                                f"systems' methods ({', '.join(m for m in methods[0] if m in methods[1])})")
    return {"release": release, "candidate": candidate, "max_drop": dict(max_drop)}
