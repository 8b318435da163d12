"""The config's JSON-Schema (`config.schema.yaml`): a raw config checked and its defaults filled
in, the first problem as one line naming the key and what was expected."""

from __future__ import annotations

import copy
from functools import cache
from importlib.resources import files

import jsonschema
import yaml

from crmatrix import CrmatrixError, did_you_mean
from crmatrix.jsontypes import json_type

SCHEMA_FILE = "config.schema.yaml"


@cache
def schema() -> dict:
    # libyaml's loader where PyYAML has it: read at every planning, our own file, a third of the time
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load(files("crmatrix.config").joinpath(SCHEMA_FILE).read_text(), Loader=loader)


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
            return (f"{where}: unknown key {', '.join(map(repr, extra))} ({did_you_mean(extra[0], allowed)}expected "
                    f"one of: {', '.join(allowed)})")
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


def apply(config: dict | None, source: str = "config") -> dict:
    """A deep copy of `config` with the schema's defaults filled in, or the first problem (by
    place: an unknown key before the others there) as a CrmatrixError naming `source`."""
    cfg = copy.deepcopy(config) if config is not None else {}
    validator = _with_defaults(jsonschema.Draft202012Validator)(schema())
    # an unknown key first among a place's errors: a misspelled required key is also a missing one,
    # and the spelling is what to fix
    errors = sorted(validator.iter_errors(cfg), key=lambda e: (
        list(map(str, e.absolute_path)), e.validator != "additionalProperties", e.message))
    if errors:
        raise CrmatrixError(f"{source}: {_message(errors[0])}")
    return cfg
