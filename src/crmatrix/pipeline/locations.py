"""Where this machine finds and keeps things: git mirror directories, package registries and
the embedding cache.

None of them changes a result — a commit, a sha256-pinned sdist and a content-addressed
cache are the same wherever they are found — so they reach jobs through the environment,
not as job parameters, which Snakemake would take for a change and re-run everything.
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping
from pathlib import Path

MIRRORS_VAR = "CRMATRIX_GIT_MIRRORS"  # also the user's own: `:`-separated directories of bundles
PYPI_VAR = "CRMATRIX_PYPI_INDEX"
NPM_VAR = "CRMATRIX_NPM_REGISTRY"
CACHE_VAR = "CRMATRIX_CACHE_DIR"
VARS = (MIRRORS_VAR, PYPI_VAR, NPM_VAR, CACHE_VAR)


def export(matrix, environ: MutableMapping[str, str] = os.environ) -> None:
    """Put a matrix's locations (a `crmatrix.config.matrix.Matrix`) into `environ`: the
    config's mirrors first, then any the user set in CRMATRIX_GIT_MIRRORS (once each, so
    re-reading the config adds none). The type is not imported, not even for type checking:
    a stage's code hash follows every import of its modules (crmatrix.codehash), and
    the fetch, install and embedding jobs import this module without running any config code."""
    mirrors = [*matrix.git_mirrors, *_split(environ.get(MIRRORS_VAR, ""))]
    environ[MIRRORS_VAR] = os.pathsep.join(dict.fromkeys(mirrors))
    environ[PYPI_VAR] = matrix.registries["pypi"]
    environ[NPM_VAR] = matrix.registries["npm"]
    environ[CACHE_VAR] = matrix.cache_dir


def _split(value: str) -> list[str]:
    return [d for d in value.split(os.pathsep) if d]


def mirrors(environ: MutableMapping[str, str] = os.environ) -> list[str]:
    return _split(environ.get(MIRRORS_VAR, ""))


def registries(environ: MutableMapping[str, str] = os.environ) -> dict[str, str]:
    return {kind: environ[var] for kind, var in (("pypi", PYPI_VAR), ("npm", NPM_VAR)) if environ.get(var)}


def cache_dir(environ: MutableMapping[str, str] = os.environ) -> Path:
    return Path(environ.get(CACHE_VAR) or "results/cache")
