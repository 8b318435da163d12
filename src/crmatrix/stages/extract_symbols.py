"""extract_symbols: every symbol of a corpus's source files, as JSONL (of a documents
corpus, such as DS-1000's docs datastore: one symbol per document)."""

from __future__ import annotations

from pathlib import Path

from crmatrix import atomic
from crmatrix.corpora.tree import is_documents
from crmatrix.symbols import Symbol
from crmatrix.symbols.extract import extract_documents, extract_files


def run(tree: Path, manifest: Path, out: Path) -> list[Symbol]:
    man = atomic.read_json(manifest)
    if is_documents(man):
        symbols = extract_documents(Path(tree), [f["path"] for f in man["files"]])
    else:
        symbols = extract_files(Path(tree), [f["path"] for f in man["files"] if f["language"]])
    atomic.write_jsonl(Path(out), [s.to_dict() for s in symbols])
    return symbols
