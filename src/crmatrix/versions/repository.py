"""A repository corpus of many commits as rule fetch_repository lays it out: the bare
repository, each commit's source files, and the manifest a run's provenance names it by. Its
own module, so that what reads a fetched repository runs none of the fetching's code."""

from __future__ import annotations

from pathlib import Path

from crmatrix import atomic

GIT = "git"  # the bare repository
COMMITS = "commits.json"  # commit -> its candidate source files [path, blob id, size]
OUTSIDE = "outside.json"  # commit -> the source files its candidate rule leaves out [path, blob id]
MANIFEST = "manifest.json"  # {corpus, pin, content_hash, languages, ...}


def commit_files(repository: Path) -> dict[str, list[tuple[str, str]]]:
    """Commit -> the (path, blob id) of each source file it holds."""
    return {c: [(p, b) for p, b, _ in files] for c, files in atomic.read_json(Path(repository) / COMMITS).items()}


def outside_files(repository: Path) -> dict[str, dict[str, str]]:
    """Commit -> path -> blob id of each source file the corpus's candidate rule leaves out
    (crmatrix.corpora.candidates): not indexed, but a gold file there is still gold."""
    path = Path(repository) / OUTSIDE
    return {c: dict(map(tuple, files)) for c, files in atomic.read_json(path).items()} if path.exists() else {}
