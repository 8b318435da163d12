"""The versioned index of a symbol store (`build`) and each commit's engine from it (`VersionedIndex`)."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from crmatrix import CrmatrixError, atomic, integrity
from crmatrix.engine import index
from crmatrix.engine.bm25 import document
from crmatrix.engine.embedtext import embedding_text
from crmatrix.engine.engine import Engine, QueryEncoder
from crmatrix.engine.knobs import Knobs
from crmatrix.engine.lexical import FUNCTION_KINDS, TYPE_KINDS, Blob, LexicalDoc, LexicalIndex, Names, SuffixBlob
from crmatrix.engine.sparse import SparseIndex, symbol_words
from crmatrix.versions.grown import Grown
from crmatrix.versions.index import columns, postings, termcounts
from crmatrix.versions.index.base import Base, check_model, read_meta, write_texts
from crmatrix.versions.index.postings import Postings
from crmatrix.versions.store import CommitSymbols, SymbolStore, content_symbol

FORMAT = "crmatrix-versioned-index/2"
KEYS = "contents.keys.npy"  # the store's: what a later build matches its contents by
LEXICAL = ("name", "signature", "qualname", "path")  # LexicalDoc's string fields, in its order
KIND_CODES = {**dict.fromkeys(FUNCTION_KINDS, 1), **dict.fromkeys(TYPE_KINDS, 2)}  # lexical's boosts; else 0


def ranks(strings: list[str]) -> np.ndarray:
    """Each string's place among the distinct strings in Python's order (equal strings, equal rank)."""
    place = {s: i for i, s in enumerate(sorted(set(strings)))}
    return np.fromiter((place[s] for s in strings), dtype=np.int32, count=len(strings))


def build(store: SymbolStore, knobs: Knobs, model_dir: Path | None, cache_dir: Path, out: Path,
          threads: int | None = None, base: Path | None = None) -> dict:
    """Index every distinct content of `store` under `knobs`' index-time fields and the model
    (None: no vectors, for a system that ranks by none; every other part is the same bytes).
    `base`: an index built before under the same knobs and model (of another store): the
    contents it holds take its parts, only the others are computed (`crmatrix.versions.grown`); the
    arrays are those of a build without it."""
    t0 = time.perf_counter()
    base = Base(base, "a versioned index", FORMAT, model_dir)
    if base:
        index.check_knobs(base.directory, base.meta, knobs)
    keys = store.keys()
    old = {k: i for i, k in enumerate(map(bytes, base.array(KEYS, np.uint8)))}
    pick = np.fromiter((old.get(k, -1) for k in map(bytes, keys)), dtype=np.int64, count=len(keys))
    new = np.flatnonzero(pick < 0)
    pick[new] = len(old) + np.arange(len(new))
    rows = Grown(len(old), len(new), pick)
    texts: list[str] = []
    lexical: dict[str, list[str]] = {f: [] for f in LEXICAL}
    made: dict[str, list[str]] = {"path": [], "name": []}
    kinds, documents = [], []
    words = postings.Builder()
    for content in (store.all_contents() if len(new) == len(keys) else store.contents(new)):
        s = content_symbol(content)
        if model_dir is not None:
            texts.append(embedding_text(s, knobs))
        doc = LexicalDoc.of(s)
        for f in LEXICAL:
            lexical[f].append(getattr(doc, f))
        made["path"].append(s.path)
        made["name"].append(s.name)
        kinds.append(KIND_CODES.get(s.kind, 0))
        words.add(dict.fromkeys(sorted(symbol_words(s)), 1))
        documents.append(document(s))
    with atomic.staged_dir(Path(out)) as d:
        n_texts, model, stats = write_texts(d, rows, base, texts, model_dir, cache_dir, threads,
                                            "content_text.npy")
        at_base, at_new = rows.renumbering()
        termcounts.build(documents, d / "bm25", rows, base.counts(len(old)), knobs)
        postings.save([*base.postings("sparse", at_base), words.part().renumbered(at_new)], d / "sparse")
        (d / "lexical").mkdir()
        for f in LEXICAL:
            lexical[f] = rows.take_list(base.strings(f), lexical[f])
            columns.save(lexical[f], d / "lexical", f)
        np.save(d / "lexical" / "kind.npy", rows.take(base.array("lexical/kind.npy", np.int8),
                                                      np.asarray(kinds, dtype=np.int8)))
        atomic.write_json(d / "lexical" / "names.json", sorted(set(lexical["name"])))
        np.save(d / "lexical" / "name_id.npy", ranks(lexical["name"]))
        (d / "ties").mkdir()
        for f, new_strings in made.items():  # the base's strings are its distinct ones at its ranks
            distinct = base.json(f"ties/{f}s.json")
            strings = rows.take_list([distinct[i] for i in base.array(f"ties/{f}.npy", np.int32).tolist()],
                                     new_strings)
            np.save(d / "ties" / f"{f}.npy", ranks(strings))
            atomic.write_json(d / "ties" / f"{f}s.json", sorted(set(strings)))
        np.save(d / KEYS, keys)
        stats["seconds"] = round(time.perf_counter() - t0, 3)
        meta = {"format": FORMAT, "store": store.hash, "model": model, "knobs": knobs.index_fields(),
                "contents": len(keys), "texts": n_texts, "embedding": stats,
                "name": atomic.hash_obj([FORMAT, store.hash, knobs.index_fields(), model and model["sha256"]]),
                "grown": {"contents": len(keys) - len(new), "superseded": bool(base) and rows.keeps_base()}}
        atomic.write_json(d / "meta.json", meta)
        integrity.record(d)
    return meta


class VersionedIndex:
    """An index `build` wrote, opened for `store`, an arm's `knobs` and model (None: an index
    without vectors): refused when it was built from another store, other index-time knobs or
    another model."""

    def __init__(self, directory: Path, store: SymbolStore, knobs: Knobs, model_dir: Path | None):
        self.directory = d = Path(directory)
        self.meta = read_meta(d, "a versioned index", FORMAT)
        if self.meta["store"] != store.hash:
            raise CrmatrixError(f"{d}: built from store {self.meta['store'][:12]}, but {store.directory} is "
                                f"{store.hash[:12]}; rebuild it")
        index.check_knobs(d, self.meta, knobs)
        self.model = check_model(d, self.meta, model_dir)
        self.store, self.knobs = store, knobs
        if self.meta["contents"] != len(store):
            raise CrmatrixError(f"{d}: indexes {self.meta['contents']} contents, the store holds {len(store)}; "
                                "delete it and run again")
        self._content_text, self.vectors = None, None
        if self.model is not None:
            self._content_text = np.load(d / "content_text.npy", mmap_mode="r")
            self.vectors = index.load_vectors(d, self.meta["texts"], self.model["dim"])
        self._bm25 = termcounts.TermCounts(d / "bm25", len(store))
        self._words = postings.Postings(d / "sparse")
        self._lexical = [columns.Column(d / "lexical", f) for f in LEXICAL]
        # each field's blob of its distinct strings (sorted) and each content's row in it; made at the first commit
        self._distinct: tuple[tuple[Blob, np.ndarray], ...] | None = None
        self._kind = np.load(d / "lexical" / "kind.npy", mmap_mode="r")
        self._name_id = np.load(d / "lexical" / "name_id.npy", mmap_mode="r")
        self._names = atomic.read_json(d / "lexical" / "names.json")
        self._name_ids = {name: i for i, name in enumerate(self._names)}
        self._underscored = np.fromiter(("_" in name for name in self._names), dtype=bool, count=len(self._names))
        self._path_rank, self._name_rank = (np.load(d / "ties" / f"{f}.npy", mmap_mode="r") for f in ("path", "name"))

    def _lexical_index(self, content: np.ndarray) -> LexicalIndex:
        """The commit's lexical ranker: its symbols' lowercased fields looked up in blobs of each
        field's distinct strings over every content, which all its commits share (a job's queries
        ask of many commits, mostly the same words, and a path is one string for all its symbols)."""
        if self._distinct is None:  # the names' are stored (names.json, name_id.npy); the rest ranked alike
            others = [column.strings() for column in self._lexical[1:]]
            self._distinct = ((SuffixBlob(self._names), np.asarray(self._name_id)),
                              *((SuffixBlob(sorted(set(strings))), ranks(strings)) for strings in others))
        kind = np.asarray(self._kind)[content]
        names = CommitNames(self._names, self._name_ids, np.asarray(self._name_id)[content], self._underscored)
        return LexicalIndex.of_parts(names, tuple(blob for blob, _ in self._distinct),
                                     tuple(ids[content] for _, ids in self._distinct), kind == 1, kind == 2,
                                     lambda: tuple(Blob.joined(*column.joined(content, Blob.SEP))
                                                   for column in self._lexical))

    def engine(self, commit: str, knobs: Knobs | None = None, encode_queries: QueryEncoder | None = None,
               neighbours: list[np.ndarray] | None = None, files=None, repository: str | None = None) -> Engine:
        """The engine of one commit; `knobs`: an arm's (None: the ones the index was opened with),
        whose index-time fields must be the index's (its query-time ones are free).
        `files`: the commit's files as documents (`crmatrix.engine.files`), for the file methods;
        `repository`: its owner/name (`Engine`'s)."""
        if knobs is None:
            knobs = self.knobs
        index.check_knobs(self.directory, self.meta, knobs)
        occ = np.asarray(self.store.occurrences(commit))
        content = occ[:, 0].astype(np.int64)
        vectors = None if self.vectors is None else np.asarray(self.vectors)[np.asarray(self._content_text)[content]]
        lexical = self._lexical_index(content)
        sparse = CommitSparse(self._words, len(self.store), content) if knobs.sparse else None
        order = np.lexsort((np.asarray(self._name_rank)[content], occ[:, 1], np.asarray(self._path_rank)[content]))
        tie = np.empty(len(occ), dtype=np.int64)
        tie[order] = np.arange(len(occ))
        # a subset's BM25 (swerank-bm25) from the same counts, with the subset's own statistics
        return Engine(CommitSymbols(self.store, occ), knobs, vectors, encode_queries, neighbours,
                      self._bm25.commit(content), lexical, sparse, tie, files,
                      bm25_of=lambda rows: self._bm25.commit(content[rows]), repository=repository)


class CommitNames(Names):
    """`Names` of one commit's symbols, from each content's lowercased name as an id among the
    index's distinct names (`names`, sorted): rows by name are one sort of the ids."""

    def __init__(self, names: list[str], ids_of: dict[str, int], ids: np.ndarray, underscored: np.ndarray):
        """`underscored`: whether each of `names` holds `_` (the index's, for all its commits)."""
        self._ids_of, self._order = ids_of, np.argsort(ids, kind="stable")
        self._sorted = ids[self._order]
        held = self._sorted[np.flatnonzero(np.diff(self._sorted, prepend=-1))]  # the distinct ids, ascending
        self.underscored = [names[i] for i in held[underscored[held]].tolist()]

    def rows(self, name: str) -> np.ndarray:
        i = self._ids_of.get(name)
        if i is None:
            return self._order[:0]
        lo, hi = np.searchsorted(self._sorted, [i, i + 1])
        return self._order[lo:hi]


class CommitSparse(SparseIndex):
    """The same coverage for one commit of a versioned index: each distinct content's words as
    postings (`symbol_words`, stored once), a commit's symbols as the contents they occur as."""

    def __init__(self, words: Postings, contents: int, occurrences: np.ndarray):
        self.n = len(occurrences)
        self._postings, self._contents, self._occurrences = words, contents, np.asarray(occurrences)

    def coverage(self, terms: tuple[str, ...]) -> np.ndarray:
        coverage = np.zeros(self._contents, dtype=np.int64)
        for t in terms:
            found = self._postings.get(t)
            if found is not None:
                coverage[found[0]] += 1
        return coverage[self._occurrences]
