"""JSON as `json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False)` writes it, byte for
byte, faster.

With an indent, the standard library encodes in Python, a generator per container: the seed
matrix's 36 MB phase matrix took 1.2 s, on the critical path of every added arm. Here a
container of scalars goes to the standard library's C encoder whole (`_flat`), a list of such
containers too (`_flat_items`), and any other container is one loop; strings go through the
standard library's own escaper, numbers through `int.__repr__` and `float.__repr__` as it does,
so the bytes are its bytes (tests/test_indented.py holds every kind of value to it). Measured:
0.71x its CPU on that matrix, 0.60x on a run, 0.54x on a call graph
(benchmarks/results/indented-2026-12-06-clean.md).
"""

from __future__ import annotations

import functools
from json.encoder import c_make_encoder, encode_basestring
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


_SCALARS = frozenset(_SCALAR)


def _unserializable(o: Any) -> str:
    raise TypeError(f"Object of type {o.__class__.__name__} is not JSON serializable")


@functools.cache
def _flat(inner: str):
    """The standard library's C encoder writing a container of scalars whose items start lines
    indented by `inner`: its items separated by a comma and `inner`, its brackets' own lines
    added by the caller; None where there is no C encoder."""
    if c_make_encoder is None:
        return None
    return c_make_encoder(None, _unserializable, encode_basestring, None, ": ", "," + inner, True, False, True)


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


_BRACKETS = {dict: "{}", list: "[]"}


def _flat_items(items: list | tuple, nl: str, inner: str) -> str | None:
    """The text of a list whose items are all non-empty objects of scalars (a run's hits, a
    matrix's per-query ranks), or all non-empty lists of scalars (a graph's edges), in one call
    of the C encoder; else None.

    The encoder separates every item by a comma and the items' own indent, the list's items
    too; an item's closing bracket followed by that and the next item's opening bracket can
    only stand between two items (a scalar never ends with a bracket, a string never holds a
    newline), so there each item's brackets are put on their own lines."""
    kind = type(items[0])
    if kind not in _BRACKETS or not all(
            type(x) is kind and x and all(type(v) in _SCALARS for v in (x.values() if kind is dict else x))
            for x in items):
        return None
    opening, closing = _BRACKETS[kind]
    deeper = inner + "  "
    flat = _flat(deeper)
    if flat is None:
        return None
    body = "".join(flat(items, 0))[2:-2]  # without the list's bracket and the first and last item's
    body = body.replace(closing + "," + deeper + opening, inner + closing + "," + inner + opening + deeper)
    return "[" + inner + opening + deeper + body + inner + closing + nl + "]"


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
        flat = _flat(inner) if all(type(v) in _SCALARS for v in o) else None
        if flat is not None:  # scores, ranks, per-query values, an edge
            return "[" + inner + "".join(flat(o, 0))[1:-1] + nl + "]"
        text = _flat_items(o, nl, inner)
        if text is not None:
            return text
        texts = [s(v) if (s := get(type(v))) else _text(v, inner) for v in o]
        return "[" + inner + ("," + inner).join(texts) + nl + "]"
    if isinstance(o, dict):
        if not o:
            return "{}"
        flat = _flat(inner) if all(type(v) in _SCALARS for v in o.values()) else None
        if flat is not None:  # most of a matrix's objects: one query's ranks, one metric's interval
            return "{" + inner + "".join(flat(o, 0))[1:-1] + nl + "}"
        texts = [(encode_basestring(k) if type(k) is str else _key(k)) + ": "
                 + (s(v) if (s := get(type(v))) else _text(v, inner)) for k, v in sorted(o.items())]
        return "{" + inner + ("," + inner).join(texts) + nl + "}"
    text = _subclass(o)
    return _unserializable(o) if text is None else text
