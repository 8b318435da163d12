"""The versioned index of whole files as documents (`build_files`) and each commit's documents
from it (`VersionedFiles.view`)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

import numpy as np

from crmatrix import atomic, integrity
from crmatrix.embed.cache import text_sha
from crmatrix.engine import files as wholefiles
from crmatrix.engine import index
from crmatrix.engine.knobs import Knobs
from crmatrix.versions.grown import Grown
from crmatrix.versions.index import termcounts
from crmatrix.versions.index.base import Base, check_model, read_meta, write_texts
from crmatrix.versions.store import checked_files, commit_run

FILES_FORMAT = "crmatrix-versioned-files/2"


def build_files(commits: Mapping[str, Iterable[tuple[str, str]]], read: Callable[[str, str], bytes | str],
                model_dir: Path | None, cache_dir: Path, out: Path, threads: int | None = None,
                base: Path | None = None, knobs: Knobs | None = None) -> dict:
    """Index the files of `commits` (sha -> (path, blob id) of each file that is a document)
    as documents (`crmatrix.engine.files`): each distinct (path, blob) once, read with
    `read(path, blob)` (its bytes or text), tokenized as `knobs` say (no knob changes its texts), and
    embedded with the model (None: no vectors; every other part is the same). `base`: a file
    index built before with the same model: the files it holds take its parts, only the
    others are read (`crmatrix.versions.grown`)."""
    t0 = time.perf_counter()
    base = Base(base, "a versioned file index", FILES_FORMAT, model_dir)
    per_commit = {c: checked_files(c, files) for c, files in sorted(commits.items())}
    docs = sorted({pb for pairs in per_commit.values() for pb in pairs})
    ids = {pb: i for i, pb in enumerate(docs)}
    runs, occurrences = {}, []
    for commit, pairs in per_commit.items():
        runs[commit] = {"start": len(occurrences), "end": len(occurrences) + len(pairs)}
        occurrences += [ids[pb] for pb in pairs]
    old = base.json("docs.jsonl", atomic.read_jsonl)
    held = {(doc["path"], doc["blob"]): i for i, doc in enumerate(old)}
    pick = np.fromiter((held.get(pb, -1) for pb in docs), dtype=np.int64, count=len(docs))
    new = np.flatnonzero(pick < 0)
    pick[new] = len(old) + np.arange(len(new))
    rows = Grown(len(old), len(new), pick)
    made, texts = [], []

    def documents() -> Iterable[str]:  # each new file read once: BM25 tokenizes it as it goes
        for i in new.tolist():
            path, blob = docs[i]
            text = wholefiles.decode(read(path, blob))
            texts.append(wholefiles.embedding_text(path, text))
            made.append({"path": path, "blob": blob, "lines": wholefiles.last_line(text),
                         "text_sha": text_sha(texts[-1])})
            yield wholefiles.document(path, text)

    with atomic.staged_dir(Path(out)) as d:
        termcounts.build(documents(), d / "bm25", rows, base.counts(len(old)), knobs)
        n_texts, model, stats = write_texts(d, rows, base, texts, model_dir, cache_dir, threads,
                                            "doc_text.npy")
        stats["seconds"] = round(time.perf_counter() - t0, 3)
        np.save(d / "occurrences.npy", np.asarray(occurrences, dtype=np.int32))
        atomic.write_jsonl(d / "docs.jsonl", rows.take_list(old, made))
        meta = {"format": FILES_FORMAT, "model": model, "commits": runs, "documents": len(docs),
                "texts": n_texts, "embed_chars": wholefiles.EMBED_CHARS, "embedding": stats,
                "name": atomic.hash_obj([FILES_FORMAT, runs, docs, model and model["sha256"]]),
                "grown": {"documents": len(docs) - len(new), "superseded": bool(base) and rows.keeps_base()}}
        atomic.write_json(d / "meta.json", meta)
        integrity.record(d)
    return meta


class VersionedFiles:
    """A versioned file index `build_files` wrote, opened for a model (refused if built with
    another; None: an index without vectors)."""

    def __init__(self, directory: Path, model_dir: Path | None):
        self.directory = d = Path(directory)
        self.meta = read_meta(d, "a versioned file index", FILES_FORMAT)
        model = check_model(d, self.meta, model_dir)
        docs = atomic.read_jsonl(d / "docs.jsonl")
        self._paths = [doc["path"] for doc in docs]
        self._lines = np.asarray([doc["lines"] for doc in docs], dtype=np.int64)
        self._occurrences = np.load(d / "occurrences.npy", mmap_mode="r")
        self._doc_text, self.vectors = None, None
        if model is not None:
            self._doc_text = np.load(d / "doc_text.npy", mmap_mode="r")
            self.vectors = index.load_vectors(d, self.meta["texts"], model["dim"])
        self._bm25 = termcounts.TermCounts(d / "bm25", len(docs))

    def view(self, commit: str) -> wholefiles.FileDocs:
        """The commit's files as documents, as `FileDocs.build` of them gives them."""
        run = commit_run(self.meta, commit, self.directory)
        doc = np.asarray(self._occurrences[run["start"]:run["end"]], dtype=np.int64)
        vectors = None if self.vectors is None else np.asarray(self.vectors[np.asarray(self._doc_text)[doc]])
        return wholefiles.FileDocs([self._paths[i] for i in doc], self._lines[doc], vectors, self._bm25.commit(doc))
