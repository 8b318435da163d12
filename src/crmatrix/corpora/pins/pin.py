"""The `Pin` a corpus entry names, the registry of the kinds fetched, and fetching what a pin
pins as a directory.

One module per kind fetched (`git`, `pypi`, `npm`, `path`), each registering its fetch with
`@register("name", pinned_by=KEY, check=...)` (crmatrix.registry: a third-party kind registers
under the entry-point group `crmatrix.pins`). Other kinds are written out of a benchmark file by
its dataset format (crmatrix.datasets.registry.Format.corpus_kind: a RepoQA repository's
content, DS-1000's docs datastore), and their callers name them (`written`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from crmatrix import CrmatrixError
from crmatrix.registry import Registry


@dataclass(frozen=True)
class PinKind:
    """A kind of pin, named by its key in a corpus entry (`git: URL`): the key beside it that
    pins it (`pinned_by`: a commit, a sha256, an integrity; none for a path), a check of that
    key's value (`check(key, value)`), and `fetch(spec, scratch, mirrors, registries)`, which
    returns the directory and where it came from."""

    name: str
    fetch: Callable[[dict, Path, list[str], dict], tuple[Path, dict]]
    pinned_by: str | None = None
    check: Callable[[str, object], None] | None = None

    @property
    def keys(self) -> tuple[str, ...]:
        """The keys of a corpus entry a pin of this kind holds."""
        return (self.name,) if self.pinned_by is None else (self.name, self.pinned_by)


def _builtin_kinds() -> None:
    from crmatrix.corpora.pins import git, npm, path, pypi  # noqa: F401 - they register themselves


def _pin_kind(name: str, obj, **facts) -> PinKind:
    """A registry entry: a fetch function (a decorated one or an entry point's) and its facts."""
    if not callable(obj):
        raise CrmatrixError(f"pin kind {name}: {obj!r} is not a fetch function")
    return PinKind(name, obj, **facts)


KINDS: Registry[PinKind] = Registry("pin kind", "crmatrix.pins", _builtin_kinds, _pin_kind)
register = KINDS.register


@dataclass(frozen=True)
class Pin:
    """What a corpus is pinned to; `kind` is a kind fetched (`KINDS`: git, npm, path, pypi), or
    one written out of a benchmark file (`repoqa`, `ds1000`: its spec is that key's)."""

    kind: str
    spec: dict

    @classmethod
    def from_config(cls, name: str, corpus: dict, written: tuple[str, ...] = ()) -> Pin:
        """`written`: the kinds written out of a benchmark file that the caller knows of."""
        # our own kinds first: the installed metadata is read only for an entry naming none of them
        known = (*KINDS.own_names(), *written)
        kinds = [k for k in known if k in corpus] or [k for k in corpus if k in KINDS]
        if len(kinds) != 1:
            known = (*KINDS.names(), *written)
            raise CrmatrixError(
                f"corpora.{name}: needs exactly one of {', '.join(known)} (found {kinds or 'none'})"
            )
        kind = kinds[0]
        if kind in written:
            return cls(kind, {kind: corpus[kind]})
        entry = KINDS.get(kind)
        if entry.pinned_by is not None:
            if entry.pinned_by not in corpus:
                raise CrmatrixError(f"corpora.{name}: a {kind} corpus needs '{entry.pinned_by}' to pin it")
            if entry.check is not None:
                entry.check(f"corpora.{name}.{entry.pinned_by}", corpus[entry.pinned_by])
        return cls(kind, {k: corpus[k] for k in entry.keys})


def fetch(pin: Pin, scratch: Path, mirrors: list[str], registries: dict) -> tuple[Path, dict]:
    """Make the pinned source available as a directory; returns it and where it came from
    (not for a kind written out of a benchmark file: the write_corpus stage makes those).

    Clones and unpacked downloads go into `scratch` (owned by the caller), the downloads
    themselves beside it until unpacked; a path corpus is read in place.
    """
    return KINDS.get(pin.kind).fetch(pin.spec, scratch, mirrors, registries)
