"""Loading and validating a matrix config: JSON-Schema with defaults, then cross-references.

Every problem becomes one line naming the key and what was expected, before any job runs.
"""

from __future__ import annotations

import copy
import difflib
from importlib.resources import files
from pathlib import Path

import jsonschema
import yaml

from crmatrix import CrmatrixError
from crmatrix.analysis.check import json_type
from crmatrix.corpora import views
from crmatrix.corpora.languages import LANGUAGES
from crmatrix.corpora.pins import Pin
from crmatrix.datasets import derived
from crmatrix.datasets.registry import FORMATS, corpus_kinds, written_by
from crmatrix.engine.knobs import MODEL_VAR
from crmatrix.pipeline import sweeps
from crmatrix.pipeline.experiment import compare_pairs, split_ranker
from crmatrix.systems import install
from crmatrix.systems.registry import check_system_config
from crmatrix.trackers import ALWAYS_TRACKED, TRACKERS

SCHEMA_FILE = "config.schema.yaml"
KNOWN_LANGUAGES = frozenset(LANGUAGES.values())
# Where the dataset stage writes a dataset's tasks (rule prepare_dataset's output): a derived
# dataset's rows, which runs' provenance hashes as its file.
TASKS_FILE = "results/datasets/{dataset}.jsonl"


def schema() -> dict:
    return yaml.safe_load(files("crmatrix.pipeline").joinpath(SCHEMA_FILE).read_text())


def _with_defaults(validator_class):
    """A validator that fills `default` values in as it validates (the jsonschema FAQ recipe)."""
    validate_props = validator_class.VALIDATORS["properties"]

    def set_defaults(validator, properties, instance, schema):
        if isinstance(instance, dict):
            for prop, sub in properties.items():
                if "default" in sub and prop not in instance:
                    instance[prop] = copy.deepcopy(sub["default"])
        yield from validate_props(validator, properties, instance, schema)

    return jsonschema.validators.extend(validator_class, {"properties": set_defaults})


def _describe(value) -> str:
    return json_type(value) if isinstance(value, (dict, list)) else f"{json_type(value)} {value!r}"


def _misplaced_option(err: jsonschema.ValidationError, extra: list[str]) -> str | None:
    """An unknown key of a system that is one of its type's options (`index_timeout_s`, say), or None."""
    path = list(err.absolute_path)
    if len(path) != 2 or path[0] != "systems":
        return None
    defs = schema()["$defs"].get(f"{err.instance.get('type')}_options", {})
    return next((k for k in extra if k in defs.get("properties", {})), None)


def _message(err: jsonschema.ValidationError) -> str:
    where = ".".join(str(p) for p in err.absolute_path) or "(top level)"
    if err.validator == "additionalProperties" and isinstance(err.instance, dict):
        allowed = sorted(err.schema.get("properties", {}))
        extra = sorted(set(err.instance) - set(allowed))
        if allowed:
            option = _misplaced_option(err, extra)
            if option:
                return (f"{where}: unknown key {option!r}: it is an option of the system's type, so it goes under "
                        f"options ({where}.options.{option})")
            close = difflib.get_close_matches(extra[0], allowed, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            return f"{where}: unknown key {', '.join(map(repr, extra))} ({hint}expected one of: {', '.join(allowed)})"
    if err.validator == "type":
        want = err.validator_value if isinstance(err.validator_value, str) else " or ".join(err.validator_value)
        hint = " (quote it in YAML)" if want == "string" else ""
        return f"{where}: expected {want}, got {_describe(err.instance)}{hint}"
    if err.validator == "required":
        return f"{where}: {err.message}"
    if err.validator in ("minimum", "exclusiveMinimum"):
        op = ">" if err.validator == "exclusiveMinimum" else ">="
        return f"{where}: expected a number {op} {err.validator_value}, got {_describe(err.instance)}"
    if err.validator in ("minItems", "maxItems") and isinstance(err.instance, list):
        bound = "at least" if err.validator == "minItems" else "at most"
        return f"{where}: expected {bound} {err.validator_value} items, got {len(err.instance)}"
    if err.validator == "enum":
        return f"{where}: expected one of: {', '.join(map(str, err.validator_value))}, got {_describe(err.instance)}"
    return f"{where}: {err.message}"


def validate(config: dict, source: str = "config") -> dict:
    """Return a validated deep copy of config with defaults filled in, or raise CrmatrixError."""
    cfg = copy.deepcopy(config) if config is not None else {}
    Validator = _with_defaults(jsonschema.Draft202012Validator)
    # an unknown key first among a place's errors: a misspelled required key is also a missing one,
    # and the spelling is what to fix
    errors = sorted(Validator(schema()).iter_errors(cfg), key=lambda e: (
        list(map(str, e.absolute_path)), e.validator != "additionalProperties", e.message))
    if errors:
        raise CrmatrixError(f"{source}: {_message(errors[0])}")
    written = tuple(corpus_kinds())
    for name, corpus in cfg["corpora"].items():
        if views.SEPARATOR in name:
            raise CrmatrixError(f"{source}: corpora.{name}: {views.SEPARATOR!r} is kept for the views crmatrix makes "
                                f"of a corpus ({views.view_name('NAME')}); rename the corpus")
        try:
            Pin.from_config(name, corpus, written)
        except CrmatrixError as e:
            raise CrmatrixError(f"{source}: {e}") from None
        if "language" in corpus and corpus["language"] not in KNOWN_LANGUAGES:
            raise CrmatrixError(f"{source}: corpora.{name}.language: expected one of: "
                                f"{', '.join(sorted(KNOWN_LANGUAGES))}, got {corpus['language']!r}")
    try:
        # the cells become arms before anything names an arm, so comparisons and systems may name them
        cfg["arms"].update(sweeps.expand(cfg))
    except CrmatrixError as e:
        raise CrmatrixError(f"{source}: {e}") from None
    for name, ds in cfg["datasets"].items():
        FORMATS.get(ds["format"], f"{source}: datasets.{name}.format")
        if ds["corpus"] not in cfg["corpora"]:
            raise CrmatrixError(
                f"{source}: datasets.{name}.corpus: names corpus {ds['corpus']!r}, which is not in corpora "
                f"(known: {', '.join(sorted(cfg['corpora']))})"
            )
        if ds["format"] == derived.FORMAT:
            continue
        if "max_queries" in ds:
            raise CrmatrixError(f"{source}: datasets.{name}.max_queries: samples only a derived dataset "
                                f"(format: {derived.FORMAT}), not format {ds['format']!r}")
        if "seed" in ds and ds.get("split", "all") in ("all", "structural"):
            raise CrmatrixError(f"{source}: datasets.{name}.seed: shuffles only a held-out split (split: dev, "
                                f"test, small_dev or small_test) or a derived dataset's sample, not split "
                                f"{ds.get('split', 'all')!r}")
    # after every dataset named its corpus: a view is no corpus a config may name
    for name, ds in cfg["datasets"].items():
        if ds["format"] == derived.FORMAT:
            _derive(cfg, name, ds, source)
    if cfg["baseline_arm"] not in cfg["arms"]:
        raise CrmatrixError(f"{source}: baseline_arm: {cfg['baseline_arm']!r} is not one of the arms "
                            f"({', '.join(cfg['arms'])})")
    for i, arm in enumerate(cfg.get("comparisons") or []):
        if arm not in cfg["arms"] or arm == cfg["baseline_arm"]:
            raise CrmatrixError(f"{source}: comparisons.{i}: {arm!r} is not an arm compared with the baseline "
                                f"({', '.join(a for a in cfg['arms'] if a != cfg['baseline_arm'])})")
    _check_models_and_arms(cfg, source)
    cfg["reference_system"] = reference_system(cfg, source)
    for name, sysconf in cfg["systems"].items():
        try:
            check_system_config(name, sysconf)
            if "install" in sysconf:
                install.check(f"systems.{name}.install", sysconf["install"])
            _check_system_arms(cfg, name, sysconf)
            _check_members(name, "datasets", sysconf.get("datasets"), sorted(cfg["datasets"]))
            _check_system_models(cfg, name, sysconf)
        except CrmatrixError as e:
            raise CrmatrixError(f"{source}: {e}") from None
    for name in cfg["trackers"]:
        if name == ALWAYS_TRACKED:
            raise CrmatrixError(f"{source}: trackers.{name}: always written (results/tracking/), "
                                "not named in the config")
        TRACKERS.get(name, f"{source}: trackers.{name}")
    try:
        for name in cfg["datasets"]:
            split_ranker(cfg, name)
        compare_pairs(cfg)
    except CrmatrixError as e:
        raise CrmatrixError(f"{source}: {e}") from None
    return cfg


def reference_system(cfg: dict, source: str = "config") -> str:
    """The system the leaderboard compares every other one with: the config's
    `reference_system`, else its first builtin system, else its first system."""
    systems = cfg["systems"]
    name = cfg.get("reference_system")
    if name is None:
        return next((s for s, conf in systems.items() if conf["type"] == "builtin"), next(iter(systems)))
    if name not in systems:
        raise CrmatrixError(f"{source}: reference_system: {name!r} is not one of the systems "
                            f"({', '.join(systems)})")
    return name


def _derive(cfg: dict, name: str, ds: dict, source: str) -> None:
    """A derived dataset is scored on its corpus's docs-withheld view (crmatrix.corpora.views),
    which becomes a corpus of the config, once for every derived dataset of that corpus; the
    dataset names the view as its corpus, and its rows as its file."""
    where = f"{source}: datasets.{name}"
    corpus = ds["corpus"]
    if "file" in ds:
        raise CrmatrixError(f"{where}.file: a derived dataset reads no file (its queries come from the leading "
                            f"docs of corpus {corpus!r})")
    if ds.get("split") == "structural":
        raise CrmatrixError(f"{where}.split: structural swaps the gold of a dataset file's rows; a derived "
                            "dataset has none (dev, test, small_dev or small_test split it)")
    written = written_by(cfg["corpora"][corpus])
    if written is not None and written.documents:
        raise CrmatrixError(f"{where}.corpus: corpus {corpus!r} is a documents corpus ({written.corpus_kind}), "
                            "no source the symbol extractor parses: it has no leading docs to derive queries from")
    ds.setdefault("max_queries", derived.DEFAULT_MAX_QUERIES)
    view = views.view_name(corpus)
    cfg["corpora"].setdefault(view, views.view_conf(corpus, cfg["corpora"][corpus]))
    ds["corpus"] = view
    ds["file"] = TASKS_FILE.format(dataset=name)


def _check_members(name: str, key: str, listed: list[str] | None, known: list[str]) -> None:
    """Each of a system's `key` (its arms, its datasets) is one of the config's."""
    unknown = [x for x in listed or [] if x not in known]
    if unknown:
        raise CrmatrixError(f"systems.{name}.{key}: {', '.join(map(repr, unknown))} not among the {key} "
                            f"({', '.join(known)})")


def _check_system_arms(cfg: dict, name: str, conf: dict) -> None:
    arms = conf.get("arms")
    if arms is None:
        return
    _check_members(name, "arms", arms, list(cfg["arms"]))
    if cfg["baseline_arm"] not in arms:
        raise CrmatrixError(f"systems.{name}.arms: expected the baseline arm {cfg['baseline_arm']!r} among them "
                            "(every other arm is compared with it)")


def _check_system_models(cfg: dict, name: str, conf: dict) -> None:
    """Each `{model:NAME}` of an external system's options names a model of the config."""
    from crmatrix.systems import external
    from crmatrix.systems.registry import system_class

    if not issubclass(system_class(conf["type"]), external.ExternalSystem):
        return
    for key, model in external.model_uses(conf["options"]):
        if model not in cfg["models"]:
            raise CrmatrixError(f"systems.{name}.options.{key}: {{model:{model}}} names no model of the config "
                                f"(known models: {', '.join(cfg['models'])})")


def _check_models(models: dict, source: str) -> None:
    """Each model's format is a known kind, with the keys that kind reads (crmatrix.embed.backends)."""
    from crmatrix.embed.backends import check_model

    for name, conf in models.items():
        try:
            check_model(name, conf)
        except CrmatrixError as e:
            raise CrmatrixError(f"{source}: {e}") from None


def _check_models_and_arms(cfg: dict, source: str) -> None:
    from crmatrix.engine import knobs

    models = cfg["models"]
    if cfg["default_model"] not in models:
        raise CrmatrixError(f"{source}: default_model: {cfg['default_model']!r} is not one of the models "
                            f"({', '.join(models)})")
    _check_models(models, source)
    for name, env in cfg["arms"].items():
        model = env.get(MODEL_VAR)
        if model is not None and model not in models:
            raise CrmatrixError(f"{source}: arms.{name}.{MODEL_VAR}: {model!r} is not one of the models "
                                f"({', '.join(models)})")
        try:
            knobs.resolve(env, None)
        except CrmatrixError as e:
            raise CrmatrixError(f"{source}: arms.{name}: {e}") from None


def clamp_warnings(cfg: dict) -> list[str]:
    """One line per arm value the builtin engine clamps into its range: the config is valid,
    but that arm does not measure the value it names."""
    from crmatrix.engine import knobs

    return [f"arms.{name}: {note}" for name, env in cfg["arms"].items() for note in knobs.resolve(env, None).notes]


def read_yaml(path: str | Path) -> dict:
    """The config file's contents; a YAML error names the file, line and column."""
    path = Path(path)
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise CrmatrixError(f"{path}: cannot read config: {e.strerror}") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f": line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        what = " ".join(x for x in (getattr(e, "context", None), getattr(e, "problem", None)) if x) or str(e)
        raise CrmatrixError(f"{path}{where}: not valid YAML: {what}") from None


def load(path: str | Path) -> dict:
    return validate(read_yaml(path), str(path))
