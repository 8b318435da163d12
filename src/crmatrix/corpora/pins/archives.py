"""Unpacking a downloaded archive (an sdist, an npm tarball) into a directory the caller owns."""

from __future__ import annotations

import tarfile
from pathlib import Path

from crmatrix import CrmatrixError


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
