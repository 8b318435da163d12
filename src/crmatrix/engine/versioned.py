"""The builtin engine's index of a versioned symbol store (`crmatrix.symbols.versioned`) under
one set of index-time knobs and one model, and each commit's engine from it, built without
rebuilding anything per commit.

Everything the engine computes of a symbol, apart from where it lies, depends on its content
alone: its embedding text, its BM25 tokens, the lowercased fields the lexical ranker matches,
the words 2e covers. So the index computes each once per distinct content, and a commit's
engine (`VersionedIndex.engine`) gathers them along the commit's occurrences:

- vectors: one per distinct embedding text, through the embedding cache (a text is embedded
  once ever: an index of a store grown by a commit embeds only that commit's new texts),
  gathered into the commit's (symbols x dim) matrix — the very matrix a plain index of the
  commit holds, so cosines are the same bits;
- BM25: term counts per content (`crmatrix.engine.termcounts`), scored with the commit's own
  N, document frequencies and average length — bitwise the plain index's scores;
- lexical: the lowercased name, signature, qualified name and path of each content as
  string columns (`crmatrix.engine.columns`), gathered into the commit's `LexicalIndex`;
- 2e: each content's words as postings, a commit's coverage gathered from them;
- ties: each content's path and name as ranks in string order, so the (path, start_line,
  name) order of a commit's symbols is one `np.lexsort`.

A commit's engine returns exactly the hits a plain `Engine` over `store.symbols_of(commit)`
with a plain index returns (tests/test_versioned.py checks every method under several arms).

On disk: `meta.json` (the store's hash, the model, the index-time knobs, counts, what was
embedded), `texts.jsonl` (each distinct embedding text and its sha256), `vectors.npy`
(float32, one row per text), `content_text.npy` (int32: each content's text row),
`bm25/`, `sparse/` (postings), `lexical/` (string columns) and `ties/` (`path.npy`,
`name.npy`: int32 ranks), and `crmatrix-checksums.json`.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from crmatrix import CrmatrixError, atomic, integrity
from crmatrix.embed.cache import text_sha
from crmatrix.engine import columns, index, postings, termcounts
from crmatrix.engine.bm25 import document
from crmatrix.engine.embedtext import embedding_text
from crmatrix.engine.engine import Engine, QueryEncoder
from crmatrix.engine.knobs import Knobs
from crmatrix.engine.lexical import LexicalDoc, LexicalIndex
from crmatrix.engine.postings import Postings
from crmatrix.engine.sparse import SparseIndex, symbol_words
from crmatrix.symbols.versioned import CommitSymbols, SymbolStore, content_symbol

FORMAT = "crmatrix-versioned-index/1"
LEXICAL = ("name", "signature", "qualname", "path", "kind")  # LexicalDoc's fields, in its order


def ranks(strings: list[str]) -> np.ndarray:
    """Each string's place among the distinct strings in Python's order (equal strings, equal rank)."""
    place = {s: i for i, s in enumerate(sorted(set(strings)))}
    return np.fromiter((place[s] for s in strings), dtype=np.int32, count=len(strings))


def embed_distinct(texts: list[str], model_dir: Path, cache_dir: Path, threads: int | None
                   ) -> tuple[list[str], np.ndarray, np.ndarray, dict, dict]:
    """(the distinct texts in first-seen order, their vectors, each text's row among them, the
    model, the embedding stats)."""
    rows_of: dict[str, int] = {}
    rows = np.fromiter((rows_of.setdefault(t, len(rows_of)) for t in texts), dtype=np.int32, count=len(texts))
    distinct = list(rows_of)
    vectors, model, stats = index.embed(distinct, model_dir, cache_dir, threads)
    return distinct, vectors.astype(np.float32), rows, model, stats


def write_texts(directory: Path, distinct: list[str], vectors: np.ndarray, rows: np.ndarray, rows_file: str) -> None:
    np.save(directory / "vectors.npy", vectors)
    np.save(directory / rows_file, rows)
    atomic.write_jsonl(directory / "texts.jsonl", [{"text_sha": text_sha(t), "text": t} for t in distinct])


def build(store: SymbolStore, knobs: Knobs, model_dir: Path, cache_dir: Path, out: Path,
          threads: int | None = None) -> dict:
    """Index every distinct content of `store` under `knobs`' index-time fields and the model."""
    t0 = time.perf_counter()
    texts: list[str] = []
    lexical: dict[str, list[str]] = {f: [] for f in LEXICAL}
    paths, names = [], []
    words = postings.Builder()
    for content in store.all_contents():
        s = content_symbol(content)
        texts.append(embedding_text(s, knobs))
        doc = LexicalDoc.of(s)
        for f in LEXICAL:
            lexical[f].append(getattr(doc, f))
        paths.append(s.path)
        names.append(s.name)
        words.add(dict.fromkeys(sorted(symbol_words(s)), 1))
    distinct, vectors, rows, model, stats = embed_distinct(texts, model_dir, cache_dir, threads)
    stats["seconds"] = round(time.perf_counter() - t0, 3)
    meta = {"format": FORMAT, "store": store.hash, "model": model, "knobs": knobs.index_fields(),
            "contents": len(texts), "texts": len(distinct), "embedding": stats}
    with atomic.staged_dir(Path(out)) as d:
        write_texts(d, distinct, vectors, rows, "content_text.npy")
        termcounts.build((document(content_symbol(c)) for c in store.all_contents()), d / "bm25")
        words.save(d / "sparse")
        (d / "lexical").mkdir()
        for f in LEXICAL:
            columns.save(lexical[f], d / "lexical", f)
        (d / "ties").mkdir()
        np.save(d / "ties" / "path.npy", ranks(paths))
        np.save(d / "ties" / "name.npy", ranks(names))
        atomic.write_json(d / "meta.json", meta)
        integrity.record(d)
    return meta


def _meta(directory: Path, what: str, form: str) -> dict:
    meta = index.read_meta(directory, what)
    if meta.get("format") != form:
        raise CrmatrixError(f"{directory}: format {meta.get('format')!r}, expected {form!r}; delete it and run again")
    return meta


class VersionedIndex:
    """An index `build` wrote, opened for `store`, an arm's `knobs` and model: refused when it
    was built from another store, other index-time knobs or another model."""

    def __init__(self, directory: Path, store: SymbolStore, knobs: Knobs, model_dir: Path):
        self.directory = d = Path(directory)
        self.meta = _meta(d, "a versioned index", FORMAT)
        if self.meta["store"] != store.hash:
            raise CrmatrixError(f"{d}: built from store {self.meta['store'][:12]}, but {store.directory} is "
                                f"{store.hash[:12]}; rebuild it")
        index.check_knobs(d, self.meta, knobs)
        self.model = index.check_model(d, self.meta, model_dir)
        self.store, self.knobs = store, knobs
        self._content_text = np.load(d / "content_text.npy", mmap_mode="r")
        if len(self._content_text) != len(store):
            raise CrmatrixError(f"{d}: indexes {len(self._content_text)} contents, the store holds {len(store)}; "
                                "delete it and run again")
        self.vectors = index.load_vectors(d, self.meta["texts"], self.model["dim"])
        self._bm25 = termcounts.TermCounts(d / "bm25", len(store))
        self._words = postings.Postings(d / "sparse")
        self._lexical = [columns.Column(d / "lexical", f) for f in LEXICAL]
        self._path_rank, self._name_rank = (np.load(d / "ties" / f"{f}.npy", mmap_mode="r") for f in ("path", "name"))

    def engine(self, commit: str, knobs: Knobs | None = None, encode_queries: QueryEncoder | None = None,
               neighbours: list[np.ndarray] | None = None) -> Engine:
        """The engine of one commit; `knobs`: an arm's (None: the ones the index was opened with),
        whose index-time fields must be the index's (its query-time ones are free)."""
        if knobs is None:
            knobs = self.knobs
        index.check_knobs(self.directory, self.meta, knobs)
        occ = np.asarray(self.store.occurrences(commit))
        content = occ[:, 0].astype(np.int64)
        vectors = np.asarray(self.vectors[np.asarray(self._content_text)[content]])
        lexical = LexicalIndex.of_fields(*(c.take(content) for c in self._lexical))
        sparse = CommitSparse(self._words, len(self.store), content) if knobs.sparse else None
        order = np.lexsort((np.asarray(self._name_rank)[content], occ[:, 1], np.asarray(self._path_rank)[content]))
        tie = np.empty(len(occ), dtype=np.int64)
        tie[order] = np.arange(len(occ))
        return Engine(CommitSymbols(self.store, occ), knobs, vectors, encode_queries, neighbours,
                      self._bm25.commit(content), lexical, sparse, tie)


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
