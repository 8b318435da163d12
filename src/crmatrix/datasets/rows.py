"""What the dataset formats share: reading a hand-built file, checking a row's fields, what
makes two queries the same, and which repository a corpus holds."""

from __future__ import annotations

import json
import re
from pathlib import Path

from crmatrix import CrmatrixError, did_you_mean

QUERY_TYPES = ("natural_language", "short_phrase", "identifier", "issue_to_edit")
UNCATEGORIZED = "uncategorized"

def query_key(query: str) -> str:
    """What makes two queries the same question: text without surrounding whitespace, case
    folded. Case is folded because every builtin method reads a query case-insensitively
    (lexical, bm25 and 2e lowercase it, MiniLM's tokenizer is uncased), so `Parse config`
    and `parse config` would be one question counted twice in the mean and the paired tests."""
    return query.strip().casefold()


def check_fields(row, where: str, keys: tuple[str, ...], optional: tuple[str, ...] | None = None) -> None:
    """A row must be an object whose `keys` are non-empty strings. With `optional` (a hand-built
    format's other fields), any other field is refused with the one it was likely meant as: a
    misspelled optional field (`query_tpye`) would be left unread, its default taken silently.
    A public benchmark's rows (optional None) carry fields crmatrix does not read."""
    if not isinstance(row, dict):
        raise CrmatrixError(f"{where}: expected an object, got {type(row).__name__}")
    if optional is not None:
        known = sorted((*keys, *optional))
        unknown = sorted(k for k in row if k not in known)
        if unknown:
            raise CrmatrixError(f"{where}: unknown field {', '.join(map(repr, unknown))} "
                                f"({did_you_mean(unknown[0], known)}the format's fields: {', '.join(known)})")
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


def read_json_document(path: Path, expected: str):
    """A dataset file that is one JSON document (`expected` says which). An empty file, or one
    JSON value per line (JSONL) where one document is expected, is named as such: the JSON
    parser's own words for them ("Expecting value: line 1 column 1", "Extra data") say neither."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise CrmatrixError(f"{path}: not readable as JSON: {e}") from e
    if not text.strip():
        raise CrmatrixError(f"{path}: the file is empty: expected {expected}")
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        if e.msg == "Extra data" and _is_jsonl(text):
            raise CrmatrixError(f"{path}: line {e.lineno}: a second JSON value: the file is JSONL (one value per "
                                f"line), but this format reads one JSON document: expected {expected}") from None
        raise CrmatrixError(f"{path}: not readable as JSON: {e}") from e


def _is_jsonl(text: str) -> bool:
    """Whether the text is two or more lines, each a JSON value of its own (blank lines aside)."""
    lines = [line for line in text.split("\n") if line.strip()]
    try:
        for line in lines:
            json.loads(line)
    except json.JSONDecodeError:
        return False
    return len(lines) > 1


def read_rows(path: Path) -> list:
    """A hand-built dataset: a non-empty JSON list (read as it is, so a bad row is named as written)."""
    rows = read_json_document(path, "a JSON list of objects, [{...}, {...}]")
    if not isinstance(rows, list) or not rows:
        raise CrmatrixError(f"{path}: expected a non-empty JSON list of objects")
    return rows
