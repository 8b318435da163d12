"""`{name}` placeholders in argv lists, argument objects and env values, filled per call.

An argv template is a list of strings, never a shell line: a query lands in one argv
element whatever it holds. Only bare names in braces are placeholders, so JSON literals
such as `{"a": 1}` pass through untouched; a placeholder the context does not offer is a
config error, caught at validation.

`{model:NAME}` is the one qualified placeholder: the absolute path of the workflow's export of
the config's model NAME (`results/models/NAME`, rule prepare_model). Whether NAME is a model
of the config is checked where the config's models are known (crmatrix.config).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from crmatrix import CrmatrixError

MODEL_PREFIX = "model:"
PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*|model:[A-Za-z0-9_][A-Za-z0-9_.-]*)\}")


def names(text: str) -> list[str]:
    return PLACEHOLDER.findall(text)


def model_uses(key: str, value: Any) -> list[tuple[str, str]]:
    """(key of the string, NAME) for each `{model:NAME}` in `value` (a string, or lists/objects of them)."""
    if isinstance(value, str):
        return [(key, n[len(MODEL_PREFIX):]) for n in names(value) if n.startswith(MODEL_PREFIX)]
    if isinstance(value, list):
        return [u for i, v in enumerate(value) for u in model_uses(f"{key}[{i}]", v)]
    if isinstance(value, dict):
        return [u for k, v in value.items() for u in model_uses(f"{key}.{k}", v)]
    return []


def model_values(model_dirs: dict[str, Any]) -> dict[str, str]:
    """The `{model:NAME}` placeholder values for these model directories (name -> directory)."""
    return {f"{MODEL_PREFIX}{n}": str(Path(d).resolve()) for n, d in model_dirs.items()}


def uses(value: Any, name: str) -> bool:
    """Whether `{name}` appears anywhere in `value` (a string, or lists/objects of them)."""
    if isinstance(value, str):
        return name in names(value)
    if isinstance(value, list):
        return any(uses(v, name) for v in value)
    if isinstance(value, dict):
        return any(uses(v, name) for v in value.values())
    return False


def check(key: str, value: Any, allowed: set[str]) -> None:
    """Every placeholder in `value` (a string, or lists/objects of them) must be in `allowed`."""
    if isinstance(value, str):
        unknown = sorted(n for n in set(names(value)) - allowed if not n.startswith(MODEL_PREFIX))
        if unknown:
            raise CrmatrixError(f"{key}: unknown placeholder {', '.join('{' + n + '}' for n in unknown)} "
                                f"(expected some of: {', '.join('{' + n + '}' for n in sorted(allowed))}, "
                                "{model:NAME})")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            check(f"{key}[{i}]", v, allowed)
    elif isinstance(value, dict):
        for k, v in value.items():
            check(f"{key}.{k}", v, allowed)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False)


def fill_text(text: str, values: dict[str, Any]) -> str:
    return PLACEHOLDER.sub(lambda m: _text(values[m.group(1)]), text)


def fill_argv(argv: list[str], values: dict[str, Any]) -> list[str]:
    return [fill_text(a, values) for a in argv]


def fill_args(args: Any, values: dict[str, Any]) -> Any:
    """Tool arguments: a string that is exactly one placeholder takes the value itself (so
    `"{k}"` stays an integer); other strings are filled as text; lists and objects recurse."""
    if isinstance(args, str):
        whole = PLACEHOLDER.fullmatch(args)
        return values[whole.group(1)] if whole else fill_text(args, values)
    if isinstance(args, list):
        return [fill_args(a, values) for a in args]
    if isinstance(args, dict):
        return {k: fill_args(v, values) for k, v in args.items()}
    return args
