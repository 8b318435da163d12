"""Whole files as documents, as MTEB's SWEbenchCodeRetrieval ranks them: one document per file,
its text the file's path and content, ranked by `file-bm25` and `file-semantic`, each hit a
whole file (symbol: its path, kind `file`, lines 1 to its last line).

BM25 reads the whole text. The embedding model reads a prefix: all-MiniLM-L6-v2 truncates
to 256 tokens with its two special ones (`max_length` of `embed.backends.OnnxEmbedder`;
`max_seq_length` in the model's `sentence_bert_config.json` under sentence-transformers), so
the text embedded is cut first, to its first EMBED_CHARS characters: more than 256 tokens of
code take, so the model still cuts where it would (of sympy 1.14's 1,532 files, the 938 longer
than that hold at least 712 of the model's tokens in their first 4096 characters), while a
file edited beyond that prefix keeps its embedding text — and its cached vector.

`FileDocs` is one commit's documents, what an `Engine` ranks files with; `FileDocs.build`
makes them plainly from (path, text) pairs, and a versioned index of a repository's files
(`crmatrix.versions.index.build_files`) holds each distinct (path, blob) once and gathers a
commit's into the `FileDocs` a plain build of its files gives.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np

from crmatrix.engine.knobs import Knobs
from crmatrix.hits import Hit

FILE_KIND = "file"
EMBED_CHARS = 4096


def decode(data: bytes | str) -> str:
    return data if isinstance(data, str) else data.decode("utf-8", errors="replace")


def document(path: str, text: str) -> str:
    """The text BM25 reads: the path, then the whole file."""
    return f"{path}\n{text}"


def embedding_text(path: str, text: str) -> str:
    return document(path, text)[:EMBED_CHARS]


def last_line(text: str) -> int:
    """The number of the file's last line (1 for an empty file), counted as a parser counts rows."""
    return max(1, text.count("\n") + (0 if text.endswith("\n") else 1))


class FileDocs:
    """One commit's files as documents, in path order: `paths`, their last `lines`, their
    `vectors` (None: not embedded) and their BM25 (`bm25.scores(query)`, one score per file)."""

    def __init__(self, paths: list[str], lines: np.ndarray, vectors: np.ndarray | None, bm25):
        self.paths, self.lines, self.vectors, self.bm25 = paths, lines, vectors, bm25
        self.tie = np.arange(len(paths))  # paths are distinct and sorted: (path, 1, path) order

    @classmethod
    def build(cls, files: Iterable[tuple[str, str]], embed: Callable[[list[str]], np.ndarray] | None = None,
              knobs: Knobs | None = None) -> FileDocs:
        """The documents of files given as (path, text), their BM25 built with bm25s (tokenized as
        `knobs` say; None: the defaults) and their embedding texts embedded by `embed` (texts -> rows)."""
        from crmatrix.engine.bm25 import BM25Index

        files = sorted(files)
        vectors = None if embed is None else np.asarray(embed([embedding_text(p, t) for p, t in files]))
        return cls([p for p, _ in files], np.asarray([last_line(t) for _, t in files], dtype=np.int64), vectors,
                   BM25Index.build_texts([document(p, t) for p, t in files], knobs))

    def hit(self, i: int, score: float) -> Hit:
        return Hit(self.paths[i], self.paths[i], FILE_KIND, 1, int(self.lines[i]), score)
