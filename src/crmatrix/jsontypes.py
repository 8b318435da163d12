"""Results as types: frozen dataclasses that read and write their JSON object field by field.

A run, a cell and the phase matrix are JSON files that later jobs read. Each is a frozen
dataclass deriving `JsonType`: `from_json` reads a parsed JSON object into it, checking every
key (one missing, unknown or of the wrong kind is one line naming the file and the key's
path), and `to_json` gives the object back. Values are kept as they came (an integer stays an
integer, a float the same float), and `atomic.write_json` sorts keys, so a file read and
written again is the same bytes.

How a field maps to its key, from its annotation and `dataclasses.field(metadata=...)`:
- its name is its key, unless `key("recall@10")` names another;
- `omitted(value)`: a key written only when the field holds something else (and read as
  `value` when it is absent), such as a query's `stratum`;
- `flat()`: a nested type whose keys sit in the enclosing object itself, such as a cell's
  comparison with the baseline, which the baseline's own cell has none of (None);
- `rest()`: a `dict[str, X]` of every key the other fields do not read (a stratum's `n`
  beside its metrics by name);
- annotations read: another `JsonType`, `X | None`, `list[X]`, `tuple[X, ...]` (a JSON list),
  `dict[str, X]`, `str`, `int`, `float` (an integer too), `bool`, and `dict`, `list` or `Any`
  for a payload kept as it is (a pin, a system's provenance).

Reading goes by a function compiled once per type (`_reader`), which checks each value but
keeps no key path: a run holds a few thousand values per query, and following the path and
each annotation per value was most of what a job reading every run spent. Where it finds a
value it cannot take, the object is read again the slow way (`_read`), whose error names the
key; the two take the same values.
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from crmatrix import CrmatrixError, atomic

_REQUIRED = object()  # a field's `omit` when its key is always written

_JSON_TYPES = {dict: "an object", list: "a list", str: "a string", bool: "a boolean",
               int: "an integer", float: "a number", type(None): "null"}


def json_type(value) -> str:
    """What a parsed JSON/YAML value is, in words: "an object", "a string", ..."""
    return _JSON_TYPES.get(type(value), type(value).__name__)


def key(name: str) -> dict:
    """The metadata of a field written under another key than its name."""
    return {"key": name}


def omitted(value=None, name: str | None = None):
    """A field whose key is left out when it holds `value` (None, or an empty dict: {})."""
    if isinstance(value, dict):
        return dataclasses.field(default_factory=dict, metadata={"omit": value, "key": name})
    return dataclasses.field(default=value, metadata={"omit": value, "key": name})


def flat():
    """A nested type (or None) whose keys are the enclosing object's own."""
    return dataclasses.field(default=None, metadata={"flat": True})


def rest():
    """A dict of the enclosing object's keys that no other field reads."""
    return dataclasses.field(default_factory=dict, metadata={"rest": True})


@dataclasses.dataclass(frozen=True)
class _Field:
    name: str
    key: str
    hint: Any
    omit: Any
    flat: bool
    rest: bool


class _At:
    """Where a value is: its file (or what stands for it), what the file should be, and the
    value's key path in it, for error lines."""

    def __init__(self, where: str, kind: str = "", path: str = ""):
        self.where, self.kind, self.path = where, kind, path

    def __truediv__(self, part: str | int) -> _At:
        if isinstance(part, int):
            return _At(self.where, self.kind, f"{self.path}[{part}]")
        return _At(self.where, self.kind, f"{self.path}.{part}" if self.path else part)

    def error(self, what: str) -> CrmatrixError:
        what = f"{self.path}: {what}" if self.path else what
        return CrmatrixError(f"{self.where}: not {self.kind} ({what})" if self.kind else f"{self.where}: {what}")


_PRIMITIVES = {str: (str,), int: (int,), float: (int, float), bool: (bool,), dict: (dict,), list: (list,)}
_NAMES = {str: "a string", int: "an integer", float: "a number", bool: "a boolean", dict: "an object",
          list: "a list"}


def _expected(hint) -> str:
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return " or ".join(dict.fromkeys("null" if a is type(None) else _expected(a) for a in typing.get_args(hint)))
    origin = typing.get_origin(hint) or hint
    if isinstance(origin, type) and issubclass(origin, JsonType):
        return "an object"
    return _NAMES.get(origin, "a list" if origin is tuple else str(hint))


def _read(hint, value, at: _At):
    if hint is Any:
        return value
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        options = [a for a in args if a is not type(None)]
        if len(options) == 1 and value is not None and options[0] not in _PRIMITIVES:
            return _read(options[0], value, at)  # an object or a list, or None: its own error, naming the key inside
        for option in options:
            try:
                return _read(option, value, at)
            except CrmatrixError:
                continue
        raise at.error(f"expected {_expected(hint)}, got {json_type(value)}")
    if isinstance(hint, type) and issubclass(hint, JsonType):
        return hint._read_object(value, at)
    if origin in (list, tuple):
        if not isinstance(value, list):
            raise at.error(f"expected {_expected(hint)}, got {json_type(value)}")
        items = [_read(args[0], v, at / i) for i, v in enumerate(value)]
        return tuple(items) if origin is tuple else items
    if origin is dict:
        if not isinstance(value, dict):
            raise at.error(f"expected an object, got {json_type(value)}")
        return {k: _read(args[1], v, at / k) for k, v in value.items()}
    kinds = _PRIMITIVES.get(hint)
    if kinds is None:
        raise TypeError(f"jsontypes: cannot read a field annotated {hint!r}")
    if isinstance(value, bool) and bool not in kinds or not isinstance(value, kinds):
        raise at.error(f"expected {_NAMES[hint]}, got {json_type(value)}")
    return value


class _Mismatch(Exception):
    """A value a compiled reader cannot take: `_read` reads it again, for the error naming it."""


def _same(value):
    return value


# the types a parsed JSON value of each primitive annotation has: the common case, taken on its
# type alone (a value of another type, a subclass say, goes through `read_primitive`'s checks)
_EXACT = {str: frozenset({str}), int: frozenset({int}), float: frozenset({int, float}), bool: frozenset({bool}),
          dict: frozenset({dict}), list: frozenset({list})}


@functools.cache
def _reader(hint) -> Callable[[Any], Any]:
    """A function reading a value of `hint` as `_read` does, raising _Mismatch where it errs."""
    if hint is Any:
        return _same
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        nullable = type(None) in args
        options = [_reader(a) for a in args if a is not type(None)]
        # a value of a primitive option's own type is taken as it is, when every option is a
        # primitive: one that reads into something else (an object, a list's items) goes first
        simple = all(a in _EXACT or a is type(None) for a in args)
        exact = frozenset().union(*(_EXACT[a] for a in args if a in _EXACT)) if simple else frozenset()
        exact |= {type(None)} if nullable else frozenset()

        def read_union(value):
            if type(value) in exact:  # None, or a primitive option's own type
                return value
            for option in options:
                try:
                    return option(value)
                except _Mismatch:
                    continue
            raise _Mismatch

        return read_union
    if isinstance(hint, type) and issubclass(hint, JsonType):
        return _object_reader(hint)
    if origin in (list, tuple):
        item, exact = _reader(args[0]), _EXACT.get(args[0])

        def read_list(value):
            if not isinstance(value, list):
                raise _Mismatch
            if exact is not None and all(type(v) in exact for v in value):  # primitives, checked at once
                items = value
            else:
                items = map(item, value)
            return tuple(items) if origin is tuple else list(items)

        return read_list
    if origin is dict:
        item = _reader(args[1])

        def read_dict(value):
            if not isinstance(value, dict):
                raise _Mismatch
            return {k: item(v) for k, v in value.items()}

        return read_dict
    kinds = _PRIMITIVES.get(hint)
    if kinds is None:
        raise TypeError(f"jsontypes: cannot read a field annotated {hint!r}")
    takes_bool, exact = bool in kinds, _EXACT[hint]

    def read_primitive(value):
        if type(value) not in exact and (not isinstance(value, kinds) or isinstance(value, bool) and not takes_bool):
            raise _Mismatch
        return value

    return read_primitive


@functools.cache
def _object_reader(cls: type[JsonType]) -> Callable[..., JsonType]:
    """`_reader` of a `JsonType`: its object (`checked`: its unknown keys refused, as
    `JsonType._read_object` does)."""
    spec = _spec(cls)
    # Its own keys read inline (most fields, read for every row of a run); a flat part or a rest
    # through a function of the whole document.
    own = tuple((f.name, f.key, _reader(f.hint), f.omit) for f in spec.fields if not f.flat and not f.rest)
    parts = tuple((f.name, _part_reader(f, spec)) for f in spec.fields if f.flat or f.rest)

    def read_object(doc, checked: bool = True):
        if not isinstance(doc, dict) or not spec.needed <= doc.keys():
            raise _Mismatch
        if checked and spec.every is not None and not doc.keys() <= spec.every:
            raise _Mismatch
        values = {name: read(doc[key]) if key in doc else dict(omit) if isinstance(omit, dict) else omit
                  for name, key, read, omit in own}
        for name, read in parts:
            values[name] = read(doc)
        return cls(**values)

    return read_object


def _part_reader(f: _Field, spec: _Spec) -> Callable[[dict], object]:
    """A flat part's value (None when it is optional and none of the keys it needs is in the
    document) or a rest's (the keys no field of `spec` names), from the whole document."""
    if f.rest:
        read = _reader(f.hint)
        return lambda doc: read({k: v for k, v in doc.items() if k not in spec.by_key})
    part = _flat_type(f.hint)
    read_part, needed = _object_reader(part), _spec(part).needed
    if type(None) in typing.get_args(f.hint):
        return lambda doc: read_part(doc, False) if needed & doc.keys() else None
    return lambda doc: read_part(doc, False)


def _write(value):
    if isinstance(value, JsonType):
        return value.to_json()
    if isinstance(value, (list, tuple)):
        return [_write(v) for v in value]
    if isinstance(value, dict):
        return {k: _write(v) for k, v in value.items()}
    return value


@dataclasses.dataclass(frozen=True)
class _Spec:
    fields: tuple[_Field, ...]
    every: frozenset[str] | None  # the keys a type reads, its flat parts' too (None: any, it has a rest)
    needed: frozenset[str]  # the keys it cannot do without (its flat parts' aside)
    by_key: dict[str, _Field]


@functools.cache
def _spec(cls: type) -> _Spec:
    hints = typing.get_type_hints(cls)
    fields = tuple(_Field(f.name, f.metadata.get("key") or f.name, hints[f.name], f.metadata.get("omit", _REQUIRED),
                          bool(f.metadata.get("flat")), bool(f.metadata.get("rest"))) for f in dataclasses.fields(cls))
    own = [f for f in fields if not f.flat and not f.rest]
    every = {f.key for f in own}.union(*(_spec(_flat_type(f.hint)).every for f in fields if f.flat))
    return _Spec(fields, None if any(f.rest for f in fields) else frozenset(every),
                 frozenset(f.key for f in own if f.omit is _REQUIRED), {f.key: f for f in own})


class JsonType:
    """The base of a frozen dataclass read from and written to one JSON object (see the module).
    `KIND`: what a file of it is, in words, for an error about a file that is not one."""

    KIND: ClassVar[str] = ""

    @classmethod
    def _read_object(cls, doc, at: _At, checked: bool = True):
        if not isinstance(doc, dict):
            raise at.error(f"expected an object, got {json_type(doc)}")
        spec = _spec(cls)
        missing = [f.key for f in spec.fields if f.key in spec.needed and f.key not in doc]
        if missing:
            raise at.error(f"no {', '.join(missing)}")
        if checked and spec.every is not None:
            unknown = sorted(k for k in doc if k not in spec.every)
            if unknown:
                raise at.error(f"unknown key {unknown[0]!r} (expected: {', '.join(sorted(spec.every))})")
        values = {}
        for f in spec.fields:
            if f.flat:
                part = _flat_type(f.hint)
                optional = type(None) in typing.get_args(f.hint)
                values[f.name] = (part._read_object(doc, at, False) if not optional or _spec(part).needed & doc.keys()
                                  else None)
            elif f.rest:
                values[f.name] = _read(f.hint, {k: v for k, v in doc.items() if k not in spec.by_key}, at)
            elif f.key in doc:
                values[f.name] = _read(f.hint, doc[f.key], at / f.key)
            else:
                values[f.name] = dict(f.omit) if isinstance(f.omit, dict) else f.omit
        return cls(**values)

    @classmethod
    def from_json(cls, doc, where: str = "JSON"):
        """`doc` (a parsed JSON object) as this type; `where` names it in an error (its file)."""
        try:
            return _object_reader(cls)(doc)
        except _Mismatch:
            return cls._read_object(doc, _At(str(where), cls.KIND))  # raises the error naming the key

    @classmethod
    def read(cls, path: Path):
        """The file at `path` as this type."""
        return cls.from_json(atomic.read_json(Path(path)), str(path))

    def write(self, path: Path) -> None:
        atomic.write_json(Path(path), self.to_json())

    def to_json(self) -> dict:
        """The JSON object of this value, as `from_json` reads it."""
        out = {}
        for f in _spec(type(self)).fields:
            value = getattr(self, f.name)
            if f.flat:
                out.update(value.to_json() if value is not None else {})
            elif f.rest:
                out.update(_write(value))
            elif f.omit is _REQUIRED or value != f.omit:
                out[f.key] = _write(value)
        return out


def members(value) -> dict[str, Any]:
    """A dataclass's fields by name, as they are (`dataclasses.asdict` copies them through)."""
    return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}


def _flat_type(hint) -> type[JsonType]:
    options = [a for a in typing.get_args(hint) if a is not type(None)] or [hint]
    return options[0]


class JsonMapping(JsonType, Mapping):
    """A `JsonType` that also reads as its JSON object (`row["rank"]`, `row.get("stratum")`):
    for functions that score rows both while a run is built (JSON objects) and once read back."""

    def __getitem__(self, name: str):
        f = _spec(type(self)).by_key[name]  # a KeyError for a key the type has not (rests and flat parts aside)
        value = getattr(self, f.name)
        if f.omit is not _REQUIRED and value == f.omit:
            raise KeyError(name)  # as the JSON object, which leaves the key out
        return value

    def __iter__(self) -> Iterator[str]:
        return iter(self.to_json())

    def __len__(self) -> int:
        return len(self.to_json())
