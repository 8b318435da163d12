"""Read-only dicts and lists: what a `crmatrix.config.matrix.Matrix` holds, all the way down.

`freeze` copies a value of dicts, lists and tuples into `FrozenDict` and `FrozenList`, whose
mutators raise TypeError. They subclass dict and list, so that everything reading them sees
what it saw before the freeze, byte for byte: `json.dumps` (and so `atomic.hash_obj`, the
cache keys) writes them as it writes a dict and a list, `repr` (Snakemake's key of a job's
parameters) spells them alike, `isinstance(x, dict)` holds. A copy is plain and mutable again
(`thaw`): `copy.deepcopy` and pickling (Snakemake hands a job its parameters pickled) give one,
so a job gets plain values, and whoever edits a matrix's value edits a copy of its own.
"""

from __future__ import annotations

from typing import Any, NoReturn


def _refuse(self, *args, **kwargs) -> NoReturn:
    raise TypeError(f"a {type(self).__name__} of the matrix is read-only: edit a copy (crmatrix.frozen.thaw)")


class FrozenDict(dict):
    """A dict whose mutators raise TypeError."""

    __slots__ = ()
    __setitem__ = __delitem__ = __ior__ = _refuse
    clear = pop = popitem = setdefault = update = _refuse

    def __reduce__(self):
        return dict, (thaw(self),)

    def __deepcopy__(self, memo: dict) -> dict:
        return thaw(self)


class FrozenList(list):
    """A list whose mutators raise TypeError."""

    __slots__ = ()
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse
    append = extend = insert = pop = remove = clear = sort = reverse = _refuse

    def __reduce__(self):
        return list, (thaw(self),)

    def __deepcopy__(self, memo: dict) -> list:
        return thaw(self)


def freeze(value: Any) -> Any:
    """`value` with every dict and list in it, however deep, a read-only copy (a tuple stays a
    tuple, of frozen items); anything else is kept as it is."""
    if isinstance(value, dict):
        return FrozenDict((k, freeze(v)) for k, v in value.items())
    if isinstance(value, list):
        return FrozenList(freeze(v) for v in value)
    if type(value) is tuple:  # a named tuple is a type of its own, kept
        return tuple(freeze(v) for v in value)
    return value


def thaw(value: Any) -> Any:
    """A plain, mutable copy of a frozen value: every dict and list in it a new dict and list
    (tuples stay tuples, of thawed items)."""
    if isinstance(value, dict):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, list):
        return [thaw(v) for v in value]
    if type(value) is tuple:
        return tuple(thaw(v) for v in value)
    return value
