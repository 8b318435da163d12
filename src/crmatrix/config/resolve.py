"""A config, with the schema's defaults filled in, resolved into a `Matrix`: what the config
implies is made explicit here, once — a sweep's cells become arms, a derived dataset's
docs-withheld view becomes a corpus, each arm's variables are read (`knobs.read`, the one
parse of an arm), each system's type resolved with its methods filled in, the reference
system and the release/candidate pairs named. What cannot be resolved is an error naming the
key; the cross-references a resolved Matrix must satisfy are `crmatrix.config.check`'s.
"""

from __future__ import annotations

import copy
from pathlib import Path

from crmatrix import CrmatrixError, did_you_mean
from crmatrix.analysis import check as run_check
from crmatrix.config import histories, sweeps
from crmatrix.config.matrix import POOLED_AS, Arm, Corpus, Dataset, Matrix, SystemConfig
from crmatrix.corpora import candidates, views
from crmatrix.datasets import derived, history, holdout, swebench
from crmatrix.datasets.registry import FORMATS, written_by
from crmatrix.engine import knobs
from crmatrix.engine.knobs import MODEL_VAR
from crmatrix.systems import install
from crmatrix.systems.registry import check_system_config, default_reference, system_class

# Where the dataset stage writes a dataset's tasks (rule prepare_dataset's output): a derived
# dataset's rows, which runs' provenance hashes as its file.
TASKS_FILE = "results/datasets/{dataset}.jsonl"
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


def resolve(cfg: dict, source: str = "config") -> Matrix:
    """The Matrix of a config the schema accepted (`schema.apply`); `cfg` is left as it is.
    `source`: the file(s) it was read from, named by every error."""
    try:
        return _resolve(copy.deepcopy(cfg), source)
    except CrmatrixError as e:
        raise CrmatrixError(f"{source}: {e}") from None


def _resolve(cfg: dict, source: str) -> Matrix:
    # the cells become arms before anything names an arm, so comparisons and systems may name them
    arm_envs = {**cfg["arms"], **sweeps.expand(cfg)}
    if cfg["baseline_arm"] not in arm_envs:
        raise CrmatrixError(f"baseline_arm: {cfg['baseline_arm']!r} is not one of the arms ({', '.join(arm_envs)})")
    arms = {name: _arm(name, env, cfg["default_model"]) for name, env in arm_envs.items()}
    corpora_conf = dict(cfg["corpora"])
    datasets = {}
    dataset_confs, repositories, undeclared = _per_commit(cfg)
    corpora_conf.update(repositories)
    for name, conf in dataset_confs.items():
        FORMATS.get(conf["format"], f"datasets.{name}.format")
        if conf["corpus"] not in corpora_conf:
            raise CrmatrixError(f"datasets.{name}.corpus: names corpus {conf['corpus']!r}, which is not in corpora "
                                f"(known: {', '.join(sorted(cfg['corpora']))})")
        if conf["format"] == derived.FORMAT:
            conf = _derive(name, conf, corpora_conf)
        datasets[name] = _dataset(name, conf, corpora_conf)
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
        datasets=datasets, systems=systems, models=cfg["models"], arms=arms, sweeps=sweeps.grids(cfg),
        compare={name: _pair(systems, cfg["baseline_arm"], headline, name, entry)
                 for name, entry in cfg["compare"].items()},
        baseline_arm=cfg["baseline_arm"], default_model=cfg["default_model"], headline_method=headline,
        reference_system=reference or default_reference({s: c.conf for s, c in systems.items()}),
        comparisons=tuple(cfg["comparisons"]) if cfg.get("comparisons") else None, top_k=cfg["top_k"],
        embed_threads=cfg["embed_threads"], cache_dir=cfg["cache_dir"], trackers=cfg["trackers"],
        git_mirrors=tuple(cfg["git_mirrors"]), registries=cfg["registries"],
        # Snakemake passes `--config` values as strings, but for True and False
        force_test=cfg["force_test"] in (True, "true"), undeclared=undeclared)


def _per_commit(cfg: dict) -> tuple[dict[str, dict], dict[str, dict], dict[str, dict[str, int]]]:
    """The datasets of the config with each per-task-commit one (format swe-bench) split into one
    per declared repository its rows name (`DATASET-REPOSITORY`, in the config's place); each such
    repository as a corpus (`repository:`, a version per commit its rows name that a mirror holds,
    all of them when no mirror holds the repository); and per dataset the rows of repositories
    the config does not declare, counted by repository. The rows are read here (one line naming
    the file, row and instance for a bad one): they name the corpora. A history dataset names its
    repository, whose history (crmatrix.config.histories) gives its versions: the parents of
    its tasks' commits (`history: true`, fetched from its history bundle)."""
    from crmatrix.corpora.pins.gitstore import bundle_commits
    from crmatrix.pipeline import locations

    declared = {_repo_name(r, conf): r for r, conf in cfg["repositories"].items()}
    mirrors = [*cfg["git_mirrors"], *locations.mirrors()]
    datasets, asked, undeclared, rules, histories_asked = {}, {}, {}, {}, {}
    for name, conf in cfg["datasets"].items():
        if conf.get("format") == history.FORMAT:
            datasets[name], corpus, parents = histories.resolve(name, conf, cfg["repositories"], mirrors, _repo_name,
                                                                cfg.get("cache_dir"))
            histories_asked.setdefault(corpus, set()).update(parents)
            rules.setdefault(corpus, {})[name] = datasets[name][CANDIDATES]
            continue
        histories.check_other(name, conf)
        if conf.get("format") != swebench.FORMAT:
            if CANDIDATES in conf:
                raise CrmatrixError(f"datasets.{name}.candidates: only a swe-bench or history dataset chooses "
                                    f"its candidate files (format {conf.get('format')} ranks its corpus's)")
            if "tasks" in conf:
                raise CrmatrixError(f"datasets.{name}.tasks: only a swe-bench or history dataset keeps the tasks "
                                    f"that edit a function (format {conf.get('format')} has no function gold)")
            datasets[name] = conf
            continue
        rule = candidates.check(conf.get(CANDIDATES, candidates.DEFAULT), f"datasets.{name}.candidates")
        rows = swebench.read_rows(Path(conf["file"]))
        for repo in sorted({r.repo for r in rows}):
            mine = [r for r in rows if r.repo == repo]
            if repo not in declared:
                undeclared.setdefault(name, {})[repo] = len(mine)
                continue
            split = f"{name}-{declared[repo]}"
            if split in cfg["datasets"]:
                raise CrmatrixError(f"datasets.{split}: the name of dataset {name}'s rows of repository {repo}; "
                                    "rename one of them")
            datasets[split] = {**conf, CANDIDATES: rule, "corpus": declared[repo], "repository": repo, POOLED_AS: name}
            asked.setdefault(declared[repo], set()).update(r.base_commit for r in mine)
            rules.setdefault(declared[repo], {})[name] = rule
    for corpus in sorted(histories_asked):  # before the rules of a repository's datasets are compared
        if corpus in asked or corpus in cfg["corpora"]:
            raise CrmatrixError(f"repositories.{corpus}: the repository of a history dataset and of another "
                                "dataset or a corpus; declare it again under another name for the other")
    corpora = {}
    for corpus, commits in sorted(asked.items()):
        if corpus in cfg["corpora"]:
            raise CrmatrixError(f"repositories.{corpus}: also a corpus of corpora; rename one of them")
        conf = cfg["repositories"][corpus]
        mirrored = bundle_commits(conf["git"], mirrors)
        corpora[corpus] = {**conf, REPOSITORY: _repo_name(corpus, conf), CANDIDATES: _one_rule(corpus, rules[corpus]),
                           "commits": sorted(commits & set(mirrored) if mirrored else commits)}
    for corpus, commits in sorted(histories_asked.items()):
        conf = cfg["repositories"][corpus]
        corpora[corpus] = {**conf, REPOSITORY: _repo_name(corpus, conf), CANDIDATES: _one_rule(corpus, rules[corpus]),
                           "commits": sorted(commits), "history": True}
    return datasets, corpora, undeclared


def _one_rule(corpus: str, rules: dict[str, str]) -> str:
    """The candidate rule the datasets of repository `corpus` name (dataset -> rule): one store,
    one candidate set."""
    if len(set(rules.values())) > 1:
        raise CrmatrixError(f"repositories.{corpus}: its datasets name different candidate rules ("
                            + ", ".join(f"{d}: {r}" for d, r in sorted(rules.items()))
                            + "); a repository's store holds one candidate set")
    return next(iter(rules.values()))


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
    view_of = views.source(conf)
    fmt = written_by(conf)
    kind = ("view" if view_of else REPOSITORY if REPOSITORY in conf else "written" if fmt is not None
            else "fetched")
    return Corpus(name, conf, conf.get("language"), kind, view_of, fmt.corpus_kind if fmt else None)


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
    corpora.setdefault(view, views.view_conf(corpus, corpora[corpus]))
    return {**conf, "max_queries": conf.get("max_queries", derived.DEFAULT_MAX_QUERIES), "corpus": view,
            "file": TASKS_FILE.format(dataset=name)}


def _dataset(name: str, conf: dict, corpora: dict) -> Dataset:
    split = conf.get("split", "all")
    seed = conf.get("seed", holdout.DEFAULT_SEED) if split in holdout.SPLITS and split != "all" else None
    sample = ({"max_queries": conf["max_queries"], "seed": conf.get("seed", holdout.DEFAULT_SEED)}
              if "max_queries" in conf else None)
    return Dataset(
        name=name, conf=conf, format=conf["format"], corpus=conf["corpus"],
        source=views.source(corpora[conf["corpus"]]) or conf["corpus"], file=conf["file"],
        callgraph=FORMATS.get(conf["format"]).callgraph,
        # a dataset without `seed:` and one with the default are one cache key
        split={"split": split, "seed": seed},
        derived_split=split if split in DERIVED_SPLITS else None, sample=sample)


def _system(name: str, conf: dict, arms: dict, baseline_arm: str, datasets: list[str]) -> SystemConfig:
    conf = check_system_config(name, conf)
    if "install" in conf:
        install.check(f"systems.{name}.install", conf["install"])
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
        name=name, conf=conf, cls=system_class(conf["type"]),
        arms=tuple(a for a in arms if own_arms is None or a in own_arms),
        datasets=tuple(d for d in datasets if own_datasets is None or d in own_datasets),
        venv=install.venv_dir(name, conf["install"]) if conf.get("install") else None)


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
