"""Fetching a pinned corpus source: a git commit, a PyPI sdist, an npm tarball or a local path.

Every fetcher checks the pin (commit id, sha256, SRI integrity) before anything is kept,
and unpacks into a directory the caller owns, so a mismatch leaves nothing behind.

One module per pin kind (`git`, `pypi`, `npm`, `path`), each registering its fetch by name, and
what they share: `pin` (the `Pin` a corpus entry names, the registry of kinds `KINDS`, and
`fetch`, which dispatches through it), `downloads` (HTTP with retries) and `archives`
(tarballs); `gitstore` reads many commits of one repository from multi-commit bundles, or
from a history bundle. Every public name is importable from here.
"""

from crmatrix.corpora.pins.archives import unpack_tarball
from crmatrix.corpora.pins.downloads import (
    CHUNK_BYTES,
    HTTP_TIMEOUT_S,
    MAX_DOWNLOAD_BYTES,
    RETRY_DELAYS_S,
    download,
    http_get,
)
from crmatrix.corpora.pins.git import (
    bundle_heads,
    bundle_refs,
    bundle_stem,
    check_commit,
    fetch_git,
    git_reason,
    glob_escape,
    mirror_bundles,
)
from crmatrix.corpora.pins.gitstore import (
    HISTORY,
    HISTORY_STEM,
    BlobReader,
    Listing,
    TreeFile,
    bundle_commits,
    commit_files,
    fetch_commits,
    fetch_history,
    has_commits,
    history_boundaries,
    history_bundle,
    read_blobs,
    write_commit,
)
from crmatrix.corpora.pins.npm import DEFAULT_NPM_REGISTRY, fetch_npm, parse_integrity
from crmatrix.corpora.pins.path import fetch_path, path_fingerprint
from crmatrix.corpora.pins.pin import KINDS, Pin, PinKind, fetch, register
from crmatrix.corpora.pins.pypi import DEFAULT_PYPI_INDEX, fetch_pypi, pinned_requirement

__all__ = [
    "CHUNK_BYTES", "DEFAULT_NPM_REGISTRY", "DEFAULT_PYPI_INDEX", "HISTORY", "HISTORY_STEM", "HTTP_TIMEOUT_S", "KINDS",
    "MAX_DOWNLOAD_BYTES", "RETRY_DELAYS_S", "BlobReader", "Listing", "Pin", "PinKind", "TreeFile", "bundle_commits",
    "bundle_heads", "bundle_refs", "bundle_stem", "check_commit", "commit_files", "download", "fetch", "fetch_commits",
    "fetch_git", "fetch_history", "fetch_npm", "fetch_path", "fetch_pypi", "git_reason", "glob_escape", "has_commits",
    "history_boundaries", "history_bundle", "http_get", "mirror_bundles", "parse_integrity", "path_fingerprint",
    "pinned_requirement", "read_blobs", "register", "unpack_tarball", "write_commit",
]
