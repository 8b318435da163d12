"""A PyPI pin: the sdist of `name==version` from a PEP 691 JSON simple index, checked against its sha256."""

from __future__ import annotations

import json
import tempfile
import urllib.parse
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import InvalidSdistFilename, canonicalize_name, parse_sdist_filename
from packaging.version import InvalidVersion, Version

from crmatrix import CrmatrixError
from crmatrix.corpora.pins.archives import unpack_tarball
from crmatrix.corpora.pins.downloads import download, http_get
from crmatrix.corpora.pins.pin import register

DEFAULT_PYPI_INDEX = "https://pypi.org/simple"


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


@register("pypi", pinned_by="sha256")
def fetch_pinned(spec: dict, scratch: Path, mirrors: list[str], registries: dict) -> tuple[Path, dict]:
    """A pypi pin's sdist, unpacked into `scratch` (from the `pypi` of `registries`, else DEFAULT_PYPI_INDEX)."""
    return scratch, fetch_pypi(spec["pypi"], spec["sha256"], scratch, registries.get("pypi", DEFAULT_PYPI_INDEX))
