"""extract_symbols: every symbol of a corpus's source files, as JSONL."""

from __future__ import annotations

from pathlib import Path

from crmatrix import atomic
from crmatrix.symbols import Symbol, extract_files


def run(tree: Path, manifest: Path, out: Path) -> list[Symbol]:
    files = [f["path"] for f in atomic.read_json(manifest)["files"] if f["language"]]
    symbols = extract_files(Path(tree), files)
    atomic.write_jsonl(Path(out), [s.to_dict() for s in symbols])
    return symbols
