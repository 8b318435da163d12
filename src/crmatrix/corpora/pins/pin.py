"""The `Pin` a corpus entry names, and fetching what it pins as a directory."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from crmatrix import CrmatrixError
from crmatrix.corpora.pins.git import check_commit, fetch_git
from crmatrix.corpora.pins.npm import DEFAULT_NPM_REGISTRY, fetch_npm
from crmatrix.corpora.pins.path import fetch_path
from crmatrix.corpora.pins.pypi import DEFAULT_PYPI_INDEX, fetch_pypi

# The kinds fetched; others are written out of a benchmark file by its dataset format
# (crmatrix.datasets.registry.Format.corpus_kind: a RepoQA repository's content, DS-1000's
# docs datastore), and their callers name them (`written`).
KINDS = ("git", "pypi", "npm", "path")


@dataclass(frozen=True)
class Pin:
    """What a corpus is pinned to; `kind` is git, pypi, npm, path, or one written out of a
    benchmark file (`repoqa`, `ds1000`: its spec is that key's)."""

    kind: str
    spec: dict

    @classmethod
    def from_config(cls, name: str, corpus: dict, written: tuple[str, ...] = ()) -> Pin:
        """`written`: the kinds written out of a benchmark file that the caller knows of."""
        known = (*KINDS, *written)
        kinds = [k for k in known if k in corpus]
        if len(kinds) != 1:
            raise CrmatrixError(
                f"corpora.{name}: needs exactly one of {', '.join(known)} (found {kinds or 'none'})"
            )
        kind = kinds[0]
        needs = {"git": "commit", "pypi": "sha256", "npm": "integrity"}
        if kind in needs and needs[kind] not in corpus:
            raise CrmatrixError(f"corpora.{name}: a {kind} corpus needs '{needs[kind]}' to pin it")
        if kind == "git":
            check_commit(f"corpora.{name}.commit", corpus["commit"])
        keys = {"git": ("git", "commit"), "pypi": ("pypi", "sha256"), "npm": ("npm", "integrity"), "path": ("path",)}
        return cls(kind, {k: corpus[k] for k in keys.get(kind, (kind,))})


def fetch(pin: Pin, scratch: Path, mirrors: list[str], registries: dict) -> tuple[Path, dict]:
    """Make the pinned source available as a directory; returns it and where it came from
    (not for a kind written out of a benchmark file: the write_corpus stage makes those).

    Clones and unpacked downloads go into `scratch` (owned by the caller), the downloads
    themselves beside it until unpacked; a path corpus is read in place.
    """
    s = pin.spec
    if pin.kind == "path":
        return fetch_path(s["path"])
    if pin.kind == "git":
        return scratch, fetch_git(s["git"], s["commit"], scratch, mirrors)
    if pin.kind == "pypi":
        return scratch, fetch_pypi(s["pypi"], s["sha256"], scratch, registries.get("pypi", DEFAULT_PYPI_INDEX))
    return scratch, fetch_npm(s["npm"], s["integrity"], scratch, registries.get("npm", DEFAULT_NPM_REGISTRY))
