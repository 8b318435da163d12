"""Named kinds of one thing (system types, dataset formats, model formats, trackers, pin kinds), one registry each.

An entry comes from one of three places, in this order of precedence:
- this package: its modules register themselves with `@register("name")` when imported,
  and the registry imports them (`builtins`) before its first lookup; given by name (a
  mapping to each entry's importer), a lookup imports the named entry's module alone, so a
  job loads only the kinds it names (an evaluation's event log, no MLflow tracker);
- the process: a notebook or a test registers with the same decorator;
- another installed package: an entry point in the registry's group, whose names are
  read from the installed metadata once per process and which is loaded when first named.

Our own entries win over installed metadata of the same name, so a source checkout
behaves as its code says even where an older install's metadata names the same entry.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Generic, TypeVar

from crmatrix import CrmatrixError, did_you_mean

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

E = TypeVar("E")
T = TypeVar("T")


def _as_is(name: str, obj):
    return obj


class Registry(Generic[E]):
    """`kind` names an entry in messages ("system type"); `group` is the entry-point group;
    `builtins` imports this package's own modules of the kind: one function importing them all,
    or by name, each entry's function importing its module (its `import` written out, as the
    stages' code hash follows imports: crmatrix.codehash); `entry(name, obj, **facts)`
    makes the entry from what the decorator or the entry point gives (default: that object,
    with no facts)."""

    def __init__(self, kind: str, group: str,
                 builtins: Callable[[], object] | Mapping[str, Callable[[], object]] | None = None,
                 entry: Callable[..., E] = _as_is):
        self.kind, self.group = kind, group
        self._entry = entry
        # the importers not run yet: of them all, or by name
        self._all = None if isinstance(builtins, Mapping) else builtins
        self._by_name = dict(builtins) if isinstance(builtins, Mapping) else {}
        self.own: dict[str, E] = {}  # registered in this process (the builtins among them once imported)
        self._installed: dict[str, E] = {}  # entry points loaded so far

    def register(self, name: str, **facts) -> Callable[[T], T]:
        """`@register("name", **facts)`: the decorated object as the entry `name`."""
        def deco(obj: T) -> T:
            self.own[name] = self._entry(name, obj, **facts)
            return obj

        return deco

    def _own(self, name: str | None = None) -> dict[str, E]:
        """Our own entries, their modules imported (once: importing registers them): every one,
        or given a `name` and builtins by name, the named one's alone."""
        if self._all is not None:
            importers, self._all = [self._all], None
        elif name is None:
            importers, self._by_name = list(self._by_name.values()), {}
        else:
            importers = [self._by_name.pop(name)] if name in self._by_name else []
        for importer in importers:
            importer()
        return self.own

    @functools.cached_property
    def _entry_points(self) -> dict[str, EntryPoint]:
        """The group's entry points by name. Scanning the installed metadata costs about 10 ms
        and the workflow asks while it plans: once per process, and only when a name is not our
        own (importing importlib.metadata is ~35 ms of CPU that most jobs need not pay)."""
        from importlib.metadata import entry_points

        return {ep.name: ep for ep in entry_points(group=self.group)}

    def names(self) -> list[str]:
        return sorted({*self._own(), *self._entry_points})

    def own_names(self) -> list[str]:
        """Our own entries' names (this package's and those registered in this process), read
        without the installed metadata: for a caller looking among keys that are mostly no
        entry's (a corpus entry's `language`, `include`, ...)."""
        return sorted(self._own())

    def __contains__(self, name: str) -> bool:
        return name in self._own() or name in self._entry_points

    def get(self, name: str, where: str = "") -> E:
        """The entry `name`; else one line naming it, the closest known name and all of them
        (prefixed with `where`, the file or key that named it)."""
        own = self._own(name)
        if name not in own:  # none of ours by that name: then every one of ours, before installed metadata
            own = self._own()
        if name in own:
            return own[name]
        if name not in self._installed and name in self._entry_points:
            ep = self._entry_points[name]
            try:
                obj = ep.load()
            except Exception as e:  # another package's code: name it, not our traceback
                raise CrmatrixError(f"{where + ': ' if where else ''}{self.kind} {name!r}: entry point "
                                    f"{ep.value} (group {self.group}) does not load: {type(e).__name__}: {e}") from e
            self._installed[name] = self._entry(name, obj)
        if name in self._installed:
            return self._installed[name]
        known = self.names()
        raise CrmatrixError(f"{where + ': ' if where else ''}unknown {self.kind} {name!r} "
                            f"({did_you_mean(name, known)}known: {', '.join(known)})")

    def entries(self) -> dict[str, E]:
        """Every entry, by name (loads every installed one)."""
        return {name: self.get(name) for name in self.names()}
