"""extract_symbols: every symbol of a corpus's source files, as JSONL (of a documents
corpus, such as DS-1000's docs datastore: one symbol per document)."""

from __future__ import annotations

from pathlib import Path

from crmatrix import atomic
from crmatrix.symbols import Symbol
from crmatrix.symbols.extract import extract_documents, extract_files


def run(tree: Path, manifest: Path, out: Path) -> list[Symbol]:
    man = atomic.read_json(manifest)
    if man["documents"]:  # each file one document (fetch_corpus.keep)
        symbols = extract_documents(Path(tree), [f["path"] for f in man["files"]])
    else:
        symbols = extract_files(Path(tree), [f["path"] for f in man["files"] if f["language"]])
    atomic.write_jsonl(Path(out), [s.to_dict() for s in symbols])
    return symbols
