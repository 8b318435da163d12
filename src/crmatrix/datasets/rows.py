"""What the dataset formats share: reading a hand-built file, checking a row's fields, what
makes two queries the same, and which repository a corpus holds."""

from __future__ import annotations

import json
import re
from pathlib import Path

from crmatrix import CrmatrixError

QUERY_TYPES = ("natural_language", "short_phrase", "identifier", "issue_to_edit")
UNCATEGORIZED = "uncategorized"

def query_key(query: str) -> str:
    """What makes two queries the same question: text without surrounding whitespace, case
    folded. Case is folded because every builtin method reads a query case-insensitively
    (lexical, bm25 and 2e lowercase it, MiniLM's tokenizer is uncased), so `Parse config`
    and `parse config` would be one question counted twice in the mean and the paired tests."""
    return query.strip().casefold()


def check_fields(row, where: str, keys: tuple[str, ...]) -> None:
    """A row must be an object whose `keys` are non-empty strings."""
    if not isinstance(row, dict):
        raise CrmatrixError(f"{where}: expected an object, got {type(row).__name__}")
    for key in keys:
        if not isinstance(row.get(key), str) or not row[key].strip():
            raise CrmatrixError(f"{where}: field '{key}' must be a non-empty string, got {row.get(key)!r}")


def corpus_repo(manifest: dict, corpus: str) -> str:
    """The repository a corpus holds: a written-out corpus's `repo`, `owner/name` of a git
    corpus (from its URL), else the pinned package's or the corpus's name."""
    pin = manifest.get("pin", {})
    spec = pin.get(pin.get("kind"))
    if isinstance(spec, dict):  # written out of a benchmark file (crmatrix.stages.write_corpus)
        return spec.get("repo", corpus)
    if pin.get("kind") == "git":
        parts = [p for p in re.split(r"[/:]", pin["git"].rstrip("/")) if p]
        parts[-1] = parts[-1].removesuffix(".git")
        return "/".join(parts[-2:])
    if pin.get("kind") == "pypi":
        return re.split(r"[=<>\[ ]", pin["pypi"], maxsplit=1)[0]
    return corpus


def read_rows(path: Path) -> list:
    """A hand-built dataset: a non-empty JSON list (read as it is, so a bad row is named as written)."""
    try:
        rows = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CrmatrixError(f"{path}: not readable as JSON: {e}") from e
    if not isinstance(rows, list) or not rows:
        raise CrmatrixError(f"{path}: expected a non-empty JSON list of objects")
    return rows


