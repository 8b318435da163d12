"""JSON as `json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False)` writes it, byte for
byte, in a third of its time.

With an indent, the standard library encodes in Python, a generator per container: the seed
matrix's 38 MB phase matrix took 1.07 s, on the critical path of every added arm. Here each
container is one loop appending to one list, and a list of scalars of one type (most of a run's or a
matrix's bytes: scores, ranks, per-query values, a graph's edges) is joined in one call. Strings go through the
standard library's own C escaper, numbers through `int.__repr__` and `float.__repr__` as it
does, so the bytes are its bytes (tests/test_indented.py holds every kind of value to it).
"""

from __future__ import annotations

from json.encoder import encode_basestring
from typing import Any

_INF = float("inf")


def dumps(obj: Any) -> str:
    return _text(obj, "\n")


def _float(f: float) -> str:
    if f != f:
        return "NaN"
    if f == _INF:
        return "Infinity"
    if f == -_INF:
        return "-Infinity"
    return float.__repr__(f)


# a scalar's text by its exact type: one look-up instead of the encoder's chain of checks
_SCALAR = {str: encode_basestring, int: int.__repr__, float: _float, bool: lambda b: "true" if b else "false",
           type(None): lambda _: "null"}


def _subclass(o: Any) -> str | None:
    """The text of a scalar of a subclass (an IntEnum, a str subclass), as the encoder checks
    them, in its order; None for a container or anything else."""
    if isinstance(o, str):
        return encode_basestring(o)
    if isinstance(o, int):
        return int.__repr__(o)
    if isinstance(o, float):
        return _float(o)
    return None


def _same_scalars(items: list | tuple) -> list[str] | None:
    """The texts of a list of scalars of one type, in one call; else None (item by item)."""
    kinds = set(map(type, items))
    if len(kinds) != 1:
        return None
    kind = kinds.pop()
    if kind is float and all(f - f == 0.0 for f in items):  # finite: nan - nan and inf - inf are nan
        return list(map(float.__repr__, items))
    scalar = _SCALAR.get(kind)
    return None if scalar is None else list(map(scalar, items))


def _key(k: Any) -> str:
    if isinstance(k, str):
        return encode_basestring(k)
    if isinstance(k, float):
        return encode_basestring(_float(k))
    if k is True:
        return '"true"'
    if k is False:
        return '"false"'
    if k is None:
        return '"null"'
    if isinstance(k, int):
        return encode_basestring(int.__repr__(k))
    raise TypeError(f"keys must be str, int, float, bool or None, not {k.__class__.__name__}")


def _text(o: Any, nl: str) -> str:
    """`o`'s text; `nl`: a newline and the indent of the line `o` starts on."""
    scalar = _SCALAR.get(type(o))
    if scalar is not None:
        return scalar(o)
    get = _SCALAR.get
    inner = nl + "  "
    if isinstance(o, (list, tuple)):
        if not o:
            return "[]"
        texts = _same_scalars(o)
        if texts is None:
            texts = [s(v) if (s := get(type(v))) else _text(v, inner) for v in o]
        return "[" + inner + ("," + inner).join(texts) + nl + "]"
    if isinstance(o, dict):
        if not o:
            return "{}"
        texts = [(encode_basestring(k) if type(k) is str else _key(k)) + ": "
                 + (s(v) if (s := get(type(v))) else _text(v, inner)) for k, v in sorted(o.items())]
        return "{" + inner + ("," + inner).join(texts) + nl + "}"
    text = _subclass(o)
    if text is None:
        raise TypeError(f"Object of type {o.__class__.__name__} is not JSON serializable")
    return text
