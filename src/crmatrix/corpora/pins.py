"""Fetching a pinned corpus source: a git commit, a PyPI sdist, an npm tarball or a local path.

Every fetcher checks the pin (commit id, sha256, SRI integrity) before anything is kept,
and unpacks into a directory the caller owns, so a mismatch leaves nothing behind.
"""

from __future__ import annotations

import base64
import hashlib
import http.client
import io
import json
import logging
import os
import re
import shutil
import tarfile
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import InvalidSdistFilename, canonicalize_name, parse_sdist_filename
from packaging.version import InvalidVersion, Version

from crmatrix import CrmatrixError
from crmatrix.progress import Progress

log = logging.getLogger(__name__)

DEFAULT_PYPI_INDEX = "https://pypi.org/simple"
DEFAULT_NPM_REGISTRY = "https://registry.npmjs.org"
HTTP_TIMEOUT_S = 60
# A corpus tarball is a few MiB; this bounds what a wrong URL or a broken server can fill.
MAX_DOWNLOAD_BYTES = 512 << 20
CHUNK_BYTES = 1 << 20
# Seconds slept before each retry of a transient failure (so 1 + len attempts in all).
RETRY_DELAYS_S = (1.0, 3.0, 9.0)
_SHA40 = re.compile(r"^[0-9a-f]{40}$")
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


def check_commit(key: str, commit) -> None:
    """A git pin names a full commit id: a branch, a tag or a short id may move or collide."""
    if not _SHA40.match(str(commit)):
        raise CrmatrixError(f"{key}: expected a full 40-hex commit id, got {commit!r}")


def _transient(e: Exception) -> bool:
    """Worth another attempt: the server's own trouble (5xx, 429) or the connection's
    (refused, reset, timed out, cut short). Never a 404 or another client error, nor a
    local failure such as a full disk."""
    if isinstance(e, urllib.error.HTTPError):
        return e.code >= 500 or e.code == 429
    return isinstance(e, (urllib.error.URLError, ConnectionError, TimeoutError, http.client.HTTPException))


def _too_large(url: str, max_bytes: int) -> CrmatrixError:
    return CrmatrixError(f"download failed: {url}: more than {max_bytes} bytes (the download limit)")


def _stream(url: str, accept: str | None, max_bytes: int, out: BinaryIO, hashes: list) -> None:
    headers = {"User-Agent": "crmatrix", **({"Accept": accept} if accept else {})}
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=HTTP_TIMEOUT_S) as resp:
        if (resp.length or 0) > max_bytes:  # http.client's parsed Content-Length
            raise _too_large(url, max_bytes)
        total = 0
        with Progress(f"downloading {url.rsplit('/', 1)[-1]}", resp.length, "bytes") as progress:
            while chunk := resp.read(CHUNK_BYTES):
                total += len(chunk)
                if total > max_bytes:  # a server that sends no length, or more than it said
                    raise _too_large(url, max_bytes)
                out.write(chunk)
                for h in hashes:
                    h.update(chunk)
                progress.advance(len(chunk))
        if resp.length:  # http.client reads b"" at an early close; the bytes still owed tell
            raise ConnectionError(f"connection closed after {total} bytes, {resp.length} more announced")


def _get(url: str, out: BinaryIO, algorithms: list[str], accept: str | None, max_bytes: int) -> dict[str, bytes]:
    """Stream `url` into `out`, hashing as it passes; retry transient failures with backoff.

    Each attempt starts `out` and the hashes afresh, so a response cut short never leaves
    its bytes in the result.
    """
    attempt = 0
    while True:
        attempt += 1
        out.seek(0)
        out.truncate()
        hashes = {a: hashlib.new(a) for a in algorithms}
        try:
            _stream(url, accept, max_bytes, out, list(hashes.values()))
            return {a: h.digest() for a, h in hashes.items()}
        except (OSError, http.client.HTTPException) as e:
            if attempt > len(RETRY_DELAYS_S) or not _transient(e):
                after = f" (after {attempt} attempts)" if attempt > 1 else ""
                raise CrmatrixError(f"download failed: {url}: {e}{after}") from e
        time.sleep(RETRY_DELAYS_S[attempt - 1])


def http_get(url: str, accept: str | None = None, max_bytes: int = MAX_DOWNLOAD_BYTES) -> bytes:
    """A small response (an index page, package metadata), in memory."""
    buf = io.BytesIO()
    _get(url, buf, [], accept, max_bytes)
    return buf.getvalue()


def download(url: str, path: Path, algorithms: list[str], max_bytes: int = MAX_DOWNLOAD_BYTES) -> dict[str, bytes]:
    """Stream `url` to the file `path` in chunks; returns its digest per hash algorithm.
    On any failure `path` is removed."""
    try:
        with open(path, "wb") as f:
            return _get(url, f, algorithms, None, max_bytes)
    except BaseException:
        Path(path).unlink(missing_ok=True)
        raise


def unpack_tarball(tarball: Path, dest: Path, what: str) -> None:
    """Unpack a .tar.gz into dest, dropping its single top-level directory (sdist, npm `package/`)."""
    try:
        with tarfile.open(tarball, mode="r:*") as tar:
            members = [m for m in tar.getmembers() if m.isfile() or m.isdir() or m.issym()]
            tops = {m.name.split("/", 1)[0] for m in members}
            strip = len(tops) == 1 and any("/" in m.name for m in members)
            for m in members:
                if strip:
                    rest = m.name.split("/", 1)
                    if len(rest) == 1:
                        continue
                    m.name = rest[1]
                tar.extract(m, dest, filter="data")
    except (tarfile.TarError, OSError) as e:
        raise CrmatrixError(f"{what}: not a readable tarball: {e}") from e


# --- git -------------------------------------------------------------------------------


def _owner_repo(url: str) -> str:
    """`https://github.com/BurntSushi/ripgrep(.git)` -> `BurntSushi+ripgrep`, the mirror bundle stem."""
    parts = [p for p in re.split(r"[/:]", url.rstrip("/")) if p]
    parts[-1] = parts[-1].removesuffix(".git")
    return "+".join(parts[-2:]) if len(parts) >= 2 else parts[-1]


def git_reason(e) -> str:
    """The line of a failed git command that says why: its first `fatal:`/`error:` line
    (the cause; later ones such as "index-pack died" are its consequences), else its last line."""
    text = (e.stderr or str(e)).strip()
    text = text.removeprefix("stderr:").strip().strip("'")  # GitPython quotes git's stderr
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return next((line for line in lines if line.startswith(("fatal:", "error:"))), lines[-1] if lines else str(e))


def bundle_heads(bundle: Path) -> set[str]:
    import git

    try:
        out = git.Git().bundle("list-heads", str(bundle))
    except git.GitCommandError as e:
        raise CrmatrixError(f"{bundle}: not a readable git bundle ({git_reason(e)})") from e
    return {line.split()[0] for line in out.splitlines() if line.strip()}


def _checkout(source: str, commit: str, dest: Path, shallow: bool) -> None:
    """Check `commit` out into dest without .git; on failure dest is left empty for the next source."""
    import git

    try:
        repo = git.Repo.clone_from(source, dest, no_checkout=True)
        if shallow:  # a single-commit bundle lacks the parent; git must be told the history stops here
            (dest / ".git" / "shallow").write_text(commit + "\n")
        repo.git.checkout("--detach", commit)
    except git.GitCommandError as e:
        _empty(dest)
        raise CrmatrixError(git_reason(e)) from e
    shutil.rmtree(dest / ".git")


def _empty(directory: Path) -> None:
    """Remove what a failed clone left in `directory`, keeping the directory (the caller's)."""
    for child in directory.iterdir() if directory.is_dir() else ():
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink()


def _from_bundle(bundle: Path, commit: str, dest: Path) -> str | None:
    """None when `commit` was checked out from `bundle`, else the line saying why not.

    A broken bundle is also logged: the search may succeed elsewhere, and the mirror
    still wants mending.
    """
    try:
        heads = bundle_heads(bundle)
    except CrmatrixError as e:
        log.warning("passed over %s", e)
        return str(e)
    if commit not in heads:
        return f"{bundle}: holds {', '.join(sorted(heads)) or 'no commit'}"
    try:
        _checkout(str(bundle), commit, dest, shallow=True)
    except CrmatrixError as e:
        why = f"{bundle}: lists the commit but cannot be checked out ({e})"
        log.warning("passed over %s", why)
        return why
    return None


def fetch_git(url: str, commit: str, dest: Path, mirrors: list[str]) -> dict:
    """Check out `commit` into dest (without .git), from a mirror bundle first, then from url.

    A bundle that is corrupt or truncated is one line of the places tried, not the end of
    the search: the next bundle, mirror, then the url may still hold the commit.
    """
    tried: list[str] = []
    stem = _owner_repo(url)
    for mirror in mirrors:
        mdir = Path(mirror)
        bundles = sorted(mdir.glob(f"{glob_escape(stem)}@*.bundle")) if mdir.is_dir() else []
        if not mdir.is_dir():
            tried.append(f"mirror {mirror}: no such directory")
        elif not bundles:
            tried.append(f"mirror {mirror}: no {stem}@*.bundle")
        for b in bundles:
            why_not = _from_bundle(b, commit, dest)
            if why_not is None:
                return {"source": str(b)}
            tried.append(f"mirror bundle {why_not}")
    try:  # dest is the caller's scratch: a failed clone leaves nothing the caller keeps
        _checkout(url, commit, dest, shallow=False)
        return {"source": url}
    except CrmatrixError as e:
        tried.append(f"{url}: {e}")
    raise CrmatrixError(f"commit {commit} of {url} found nowhere; tried:\n  " + "\n  ".join(tried))


def glob_escape(s: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", s)


# --- PyPI ------------------------------------------------------------------------------


def _sdist_url(page: dict, page_url: str, name: str, version: Version) -> str | None:
    """The .tar.gz sdist of name==version on a PEP 691 page (names and versions compared
    normalized, so `Demo.Pkg` 1.2 finds `demo_pkg-1.2.0.tar.gz`)."""
    for f in page.get("files", []):
        if not f["filename"].endswith(".tar.gz"):
            continue
        try:
            fname, fver = parse_sdist_filename(f["filename"])
        except (InvalidSdistFilename, InvalidVersion):
            continue  # not ours to judge: another project's naming, or a pre-PEP 440 version
        if fname == canonicalize_name(name) and fver == version:
            return urllib.parse.urljoin(page_url, f["url"])
    return None


def pinned_requirement(spec: str, what: str, extras: bool = False) -> tuple[Requirement, Version]:
    """`name==version` (with `[extras]` when allowed) parsed as pip would; anything but one
    exact version is not a pin."""
    try:
        req = Requirement(spec)
        (pinned,) = req.specifier
        if pinned.operator != "==" or (req.extras and not extras) or req.marker or req.url:
            raise ValueError(spec)
        return req, Version(pinned.version)
    except (InvalidRequirement, InvalidVersion, ValueError):
        form = "'name==version' or 'name[extra]==version'" if extras else "'name==version'"
        raise CrmatrixError(f"{what} {spec!r}: expected {form}") from None


def fetch_pypi(spec: str, sha256: str, dest: Path, index: str = DEFAULT_PYPI_INDEX) -> dict:
    """Download the sdist of `name==version` from a PEP 691 JSON simple index and verify it."""
    req, version = pinned_requirement(spec, "pypi pin")
    name = req.name
    page_url = f"{index.rstrip('/')}/{canonicalize_name(name)}/"
    page = json.loads(http_get(page_url, accept="application/vnd.pypi.simple.v1+json"))
    url = _sdist_url(page, page_url, name, version)
    if url is None:
        raise CrmatrixError(f"pypi pin {spec}: no sdist (.tar.gz) for version {version} at {page_url}")
    with tempfile.TemporaryDirectory(prefix=".download-", dir=dest.parent) as tmp:  # in the caller's scratch
        sdist = Path(tmp) / "sdist.tar.gz"
        got = download(url, sdist, ["sha256"])["sha256"].hex()
        if got != sha256.lower():
            raise CrmatrixError(f"pypi pin {spec}: sha256 mismatch for {url}: expected {sha256}, got {got}")
        unpack_tarball(sdist, dest, f"pypi pin {spec}")
    return {"source": url}


# --- npm -------------------------------------------------------------------------------


def parse_integrity(integrity: str, what: str) -> tuple[str, str]:
    """Subresource-Integrity `algo-base64` (npm's `dist.integrity`) as (algorithm, base64 digest)."""
    algo, _, b64 = integrity.partition("-")
    if algo not in ("sha512", "sha384", "sha256", "sha1") or not b64:
        raise CrmatrixError(f"{what}: integrity {integrity!r} is not of the form sha512-<base64>")
    return algo, b64


def fetch_npm(spec: str, integrity: str, dest: Path, registry: str = DEFAULT_NPM_REGISTRY) -> dict:
    """Download `name@version` (scopes allowed) from the registry's metadata and verify it."""
    m = re.fullmatch(r"\s*(@[^/@\s]+/[^@\s]+|[^@\s]+)@([^@\s]+)\s*", spec)
    if not m:
        raise CrmatrixError(f"npm pin {spec!r}: expected 'name@version'")
    name, ver = m.groups()
    algo, b64 = parse_integrity(integrity, f"npm pin {spec}")
    meta_url = f"{registry.rstrip('/')}/{name.replace('/', '%2f')}/{ver}"
    try:
        url = json.loads(http_get(meta_url))["dist"]["tarball"]
    except (KeyError, ValueError) as e:
        raise CrmatrixError(f"npm pin {spec}: {meta_url} has no dist.tarball") from e
    with tempfile.TemporaryDirectory(prefix=".download-", dir=dest.parent) as tmp:  # in the caller's scratch
        tgz = Path(tmp) / "package.tgz"
        got = base64.b64encode(download(url, tgz, [algo])[algo]).decode()
        if got != b64:
            raise CrmatrixError(f"npm pin {spec}: integrity mismatch: expected {integrity}, got {algo}-{got}")
        unpack_tarball(tgz, dest, f"npm pin {spec}")
    return {"source": url}


def fetch(pin: Pin, scratch: Path, mirrors: list[str], registries: dict) -> tuple[Path, dict]:
    """Make the pinned source available as a directory; returns it and where it came from
    (not for a kind written out of a benchmark file: the write_corpus stage makes those).

    Clones and unpacked downloads go into `scratch` (owned by the caller), the downloads
    themselves beside it until unpacked; a path corpus is read in place.
    """
    s = pin.spec
    if pin.kind == "path":
        src = Path(s["path"])
        if not src.is_dir():
            raise CrmatrixError(f"path corpus {s['path']}: not a directory")
        return src, {"source": str(src.resolve())}
    if pin.kind == "git":
        return scratch, fetch_git(s["git"], s["commit"], scratch, mirrors)
    if pin.kind == "pypi":
        return scratch, fetch_pypi(s["pypi"], s["sha256"], scratch, registries.get("pypi", DEFAULT_PYPI_INDEX))
    return scratch, fetch_npm(s["npm"], s["integrity"], scratch, registries.get("npm", DEFAULT_NPM_REGISTRY))


def path_fingerprint(path: str) -> str:
    """Cheap change detector for a `path` corpus (names, sizes, mtimes), so edits re-run its jobs."""
    h = hashlib.sha256()
    root = Path(path)
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != ".git")
        for fn in sorted(filenames):
            p = Path(dirpath, fn)
            try:
                st = p.lstat()
            except OSError:
                continue
            h.update(f"{p.relative_to(root).as_posix()}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()
