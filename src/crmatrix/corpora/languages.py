"""Which language a file is in, by extension, and which language dominates a corpus.

Its own module because fetching (the manifest's counts), symbol extraction (the grammar)
and the engine's auto gating all ask, and none of them should depend on another's code.
"""

from __future__ import annotations

import pathlib

LANGUAGES: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".rs": "rust",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".go": "go",
    ".java": "java",
}


def language_for(path: str) -> str | None:
    """Language name for a path by its extension, None if unsupported."""
    return LANGUAGES.get(pathlib.PurePosixPath(path).suffix.lower())


def dominant_language(manifest: dict, min_files: int = 3) -> str | None:
    """The most common source language (ties by name); None below `min_files` source files
    (CodeLens's auto-gating uses 3; reports label even a one-file corpus)."""
    counts = {k: v for k, v in manifest["languages"].items() if k != "other"}
    if not counts or sum(counts.values()) < min_files:
        return None
    return min(counts, key=lambda k: (-counts[k], k))
