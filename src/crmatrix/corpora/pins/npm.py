"""An npm pin: the tarball of `name@version` from the registry's metadata, checked against its
Subresource-Integrity digest."""

from __future__ import annotations

import base64
import json
import re
import tempfile
from pathlib import Path

from crmatrix import CrmatrixError
from crmatrix.corpora.pins.archives import unpack_tarball
from crmatrix.corpora.pins.downloads import download, http_get
from crmatrix.corpora.pins.pin import register

DEFAULT_NPM_REGISTRY = "https://registry.npmjs.org"


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


@register("npm", pinned_by="integrity")
def fetch_pinned(spec: dict, scratch: Path, mirrors: list[str], registries: dict) -> tuple[Path, dict]:
    """A npm pin's tarball, unpacked into `scratch` (from the `npm` of `registries`, else DEFAULT_NPM_REGISTRY)."""
    return scratch, fetch_npm(spec["npm"], spec["integrity"], scratch, registries.get("npm", DEFAULT_NPM_REGISTRY))
