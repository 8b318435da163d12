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
  string columns (`crmatrix.engine.columns`), gathered into the commit's blobs in one pass
  each; its lowercased name as an id among the distinct ones, so the commit's symbols by name
  are one sort; whether its kind is a function's or a type's;
- 2e: each content's words as postings, a commit's coverage gathered from them;
- ties: each content's path and name as ranks in string order, so the (path, start_line,
  name) order of a commit's symbols is one `np.lexsort`.

A commit's engine returns exactly the hits a plain `Engine` over `store.symbols_of(commit)`
with a plain index returns (tests/test_versioned.py checks every method under several arms).

Whole files as documents (`crmatrix.engine.files`) are versioned the same way (`build_files`,
`VersionedFiles`): each distinct (path, blob) tokenized and embedded once, per commit the
documents it holds; `VersionedFiles.view(commit)` is the `FileDocs` a plain build of the
commit's files gives, for an engine's `files`.

Both are built again when a commit is added, and both grow from the previous build of the
same code, model and knobs (`base`, kept by `crmatrix.bases`): the contents or files it holds
take its parts — vectors, counts, columns, postings — gathered (`crmatrix.grown`), and only the
others are tokenized and embedded. The arrays are those a build without it writes.

On disk: `meta.json` (the store's hash, the model, the index-time knobs, counts, what was
embedded and taken from the base), `contents.keys.npy` (the store's content keys: what the
next build matches its contents by), `texts.jsonl` (each distinct embedding text and its
sha256), `vectors.npy` (float32, one row per text), `content_text.npy` (int32: each content's
text row), `bm25/`, `sparse/` (postings), `lexical/` (string columns; `kind.npy`, int8: 1 a
function's kind, 2 a type's; `names.json`, the distinct lowercased names, and `name_id.npy`)
and `ties/` (`path.npy`, `name.npy`: int32 ranks among `paths.json` and `names.json`, the
distinct ones sorted), and `crmatrix-checksums.json`. A file index: `meta.json` (each
commit's run [start, end) of `occurrences.npy`, the model, counts), `docs.jsonl` (per document
its path, blob, last line and embedding text's sha256), `occurrences.npy` (int32 document ids,
commits in sha order, each commit's in path order), `doc_text.npy`, `texts.jsonl`,
`vectors.npy`, `bm25/`, `crmatrix-checksums.json`.
"""

from __future__ import annotations

import functools
import importlib.metadata
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

import numpy as np

from crmatrix import CrmatrixError, atomic, integrity
from crmatrix.embed.cache import text_sha
from crmatrix.engine import columns, index, postings, termcounts
from crmatrix.engine import files as wholefiles
from crmatrix.engine.bm25 import document
from crmatrix.engine.embedtext import embedding_text
from crmatrix.engine.engine import Engine, QueryEncoder
from crmatrix.engine.knobs import Knobs
from crmatrix.engine.lexical import FUNCTION_KINDS, TYPE_KINDS, Blob, LexicalDoc, LexicalIndex, Names
from crmatrix.engine.postings import Postings
from crmatrix.engine.sparse import SparseIndex, symbol_words
from crmatrix.grown import Grown
from crmatrix.symbols.versioned import CommitSymbols, SymbolStore, checked_files, commit_run, content_symbol

FORMAT = "crmatrix-versioned-index/2"
FILES_FORMAT = "crmatrix-versioned-files/2"
KEYS = "contents.keys.npy"  # the store's: what a later build matches its contents by
LEXICAL = ("name", "signature", "qualname", "path")  # LexicalDoc's string fields, in its order
KIND_CODES = {**dict.fromkeys(FUNCTION_KINDS, 1), **dict.fromkeys(TYPE_KINDS, 2)}  # lexical's boosts; else 0

# A repository's index (rule build_repository_index): the symbols' part and the whole files' part
SYMBOL_INDEX, FILE_INDEX = "symbols", "files"

def ranks(strings: list[str]) -> np.ndarray:
    """Each string's place among the distinct strings in Python's order (equal strings, equal rank)."""
    place = {s: i for i, s in enumerate(sorted(set(strings)))}
    return np.fromiter((place[s] for s in strings), dtype=np.int32, count=len(strings))


@functools.cache
def code_key() -> str:
    """What an index's rows depend on besides their contents, the knobs and the model: the
    source of the engine (tokenizing, embedding texts, lexical fields, words) and of the
    symbol record, and the versions of the tokenizer's libraries."""
    root = Path(__file__).resolve().parent.parent
    sources = [[p.relative_to(root).as_posix(), p.read_text(encoding="utf-8")]
               for p in sorted([*(root / "engine").rglob("*.py"), root / "symbols" / "record.py", root / "grown.py"])]
    return atomic.hash_obj({"modules": sources, "versions": [importlib.metadata.version(d)
                                                            for d in ("bm25s", "PyStemmer", "numpy")]})


def build_key(model_sha: str, fields: dict | None = None) -> str:
    """The key of the bases (`crmatrix.bases`) an index grows from: its code, model and knob
    fields (`Knobs.index_fields`; a file index's: `Knobs.tokenizer_fields`, or None)."""
    return atomic.hash_obj([code_key(), model_sha, fields])[:16]


class _Base:
    """The parts a build takes from its base: a previous build's, checked to be one it can grow
    from (the same format and model), or empty ones when there is none."""

    def __init__(self, directory: Path | None, what: str, form: str, model_dir: Path):
        self.directory = Path(directory) if directory is not None else None
        self.meta = _meta(self.directory, what, form) if self.directory else None
        if self.meta is not None:
            index.check_model(self.directory, self.meta, model_dir)

    def __bool__(self) -> bool:
        return self.directory is not None

    def array(self, name: str, dtype) -> np.ndarray:
        return np.load(self.directory / name) if self else np.zeros(0, dtype=dtype)

    def json(self, name: str, load=atomic.read_json) -> list:
        return load(self.directory / name) if self else []

    def strings(self, name: str) -> list[str]:
        return columns.Column(self.directory / "lexical", name).strings() if self else []

    def postings(self, name: str, at: np.ndarray) -> list[postings.Part]:
        return [postings.Postings(self.directory / name).part().renumbered(at)] if self else []

    def counts(self, rows: int) -> termcounts.TermCounts | None:
        return termcounts.TermCounts(self.directory / "bm25", rows) if self else None


def write_texts(d: Path, rows: Grown, base: _Base, base_texts: np.ndarray, new: list[str],
                model_dir: Path, cache_dir: Path, threads: int | None, rows_file: str) -> tuple[int, dict, dict]:
    """Write each row's embedding text into `d`: the distinct texts in the order the rows first
    hold them (`texts.jsonl`), their vectors (`vectors.npy`) and each row's text (`rows_file`).
    A base row's text is the `base` index's row `base_texts[row]`; a new row's, `new[row]`,
    embedded through the cache unless the base holds it. Returns (distinct texts, the model,
    the embedding stats)."""
    old = base.json("texts.jsonl", atomic.read_jsonl)
    known = {t["text_sha"]: i for i, t in enumerate(old)}
    fresh: list[dict] = []
    new_ids = []
    for text in new:
        sha = text_sha(text)
        i = known.get(sha)
        if i is None:
            i = known[sha] = len(old) + len(fresh)
            fresh.append({"text_sha": sha, "text": text})
        new_ids.append(i)
    text = rows.take(np.asarray(base_texts, dtype=np.int64), np.asarray(new_ids, dtype=np.int64))
    distinct, first = np.unique(text, return_index=True)
    order = distinct[np.argsort(first, kind="stable")]
    row = np.full(len(old) + len(fresh), -1, dtype=np.int64)
    row[order] = np.arange(len(order))
    vectors, model, stats = index.embed([t["text"] for t in fresh], model_dir, cache_dir, threads)
    old_vectors = index.load_vectors(base.directory, len(old), model["dim"]) if base else np.zeros((0, model["dim"]))
    vectors = np.concatenate([old_vectors, vectors.reshape(len(fresh), model["dim"])]).astype(np.float32)
    np.save(d / "vectors.npy", vectors[order])
    np.save(d / rows_file, row[text].astype(np.int32))
    atomic.write_jsonl(d / "texts.jsonl", [(old[i] if i < len(old) else fresh[i - len(old)]) for i in order.tolist()])
    return len(order), model, {**stats, "reused": int((order < len(old)).sum())}


def build(store: SymbolStore, knobs: Knobs, model_dir: Path, cache_dir: Path, out: Path,
          threads: int | None = None, base: Path | None = None) -> dict:
    """Index every distinct content of `store` under `knobs`' index-time fields and the model.
    `base`: an index built before under the same knobs and model (of another store): the
    contents it holds take its parts, only the others are computed (`crmatrix.grown`); the
    arrays are those of a build without it."""
    t0 = time.perf_counter()
    base = _Base(base, "a versioned index", FORMAT, model_dir)
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
        n_texts, model, stats = write_texts(d, rows, base, base.array("content_text.npy", np.int32), texts,
                                            model_dir, cache_dir, threads, "content_text.npy")
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
                "name": atomic.hash_obj([FORMAT, store.hash, knobs.index_fields(), model["sha256"]]),
                "grown": {"contents": len(keys) - len(new), "superseded": bool(base) and rows.keeps_base()}}
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
        self._kind = np.load(d / "lexical" / "kind.npy", mmap_mode="r")
        self._name_id = np.load(d / "lexical" / "name_id.npy", mmap_mode="r")
        self._names = atomic.read_json(d / "lexical" / "names.json")
        self._name_ids = {name: i for i, name in enumerate(self._names)}
        self._path_rank, self._name_rank = (np.load(d / "ties" / f"{f}.npy", mmap_mode="r") for f in ("path", "name"))

    def _lexical_index(self, content: np.ndarray) -> LexicalIndex:
        """The commit's lexical ranker: its symbols' lowercased fields gathered, joined as `Blob`s are."""
        blobs = (Blob.joined(*column.joined(content, Blob.SEP)) for column in self._lexical)
        kind = np.asarray(self._kind)[content]
        names = CommitNames(self._names, self._name_ids, np.asarray(self._name_id)[content])
        return LexicalIndex.of_parts(names, *blobs, kind == 1, kind == 2)

    def engine(self, commit: str, knobs: Knobs | None = None, encode_queries: QueryEncoder | None = None,
               neighbours: list[np.ndarray] | None = None, files=None) -> Engine:
        """The engine of one commit; `knobs`: an arm's (None: the ones the index was opened with),
        whose index-time fields must be the index's (its query-time ones are free).
        `files`: the commit's files as documents (`crmatrix.engine.files`), for the file methods."""
        if knobs is None:
            knobs = self.knobs
        index.check_knobs(self.directory, self.meta, knobs)
        occ = np.asarray(self.store.occurrences(commit))
        content = occ[:, 0].astype(np.int64)
        vectors = np.asarray(self.vectors)[np.asarray(self._content_text)[content]]
        lexical = self._lexical_index(content)
        sparse = CommitSparse(self._words, len(self.store), content) if knobs.sparse else None
        order = np.lexsort((np.asarray(self._name_rank)[content], occ[:, 1], np.asarray(self._path_rank)[content]))
        tie = np.empty(len(occ), dtype=np.int64)
        tie[order] = np.arange(len(occ))
        return Engine(CommitSymbols(self.store, occ), knobs, vectors, encode_queries, neighbours,
                      self._bm25.commit(content), lexical, sparse, tie, files)


class CommitNames(Names):
    """`Names` of one commit's symbols, from each content's lowercased name as an id among the
    index's distinct names (`names`, sorted): rows by name are one sort of the ids."""

    def __init__(self, names: list[str], ids_of: dict[str, int], ids: np.ndarray):
        self._ids_of, self._order = ids_of, np.argsort(ids, kind="stable")
        self._sorted = ids[self._order]
        self.underscored = [names[i] for i in np.unique(ids).tolist() if "_" in names[i]]

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


# -- whole files as documents ------------------------------------------------------------------


def build_files(commits: Mapping[str, Iterable[tuple[str, str]]], read: Callable[[str, str], bytes | str],
                model_dir: Path, cache_dir: Path, out: Path, threads: int | None = None,
                base: Path | None = None, knobs: Knobs | None = None) -> dict:
    """Index the files of `commits` (sha -> (path, blob id) of each file that is a document)
    as documents (`crmatrix.engine.files`): each distinct (path, blob) once, read with
    `read(path, blob)` (its bytes or text), tokenized as `knobs` say (no knob changes its texts). `base`: a file
    index built before with the same model: the files it holds take its parts, only the
    others are read (`crmatrix.grown`)."""
    t0 = time.perf_counter()
    base = _Base(base, "a versioned file index", FILES_FORMAT, model_dir)
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
        n_texts, model, stats = write_texts(d, rows, base, base.array("doc_text.npy", np.int32), texts, model_dir,
                                            cache_dir, threads, "doc_text.npy")
        stats["seconds"] = round(time.perf_counter() - t0, 3)
        np.save(d / "occurrences.npy", np.asarray(occurrences, dtype=np.int32))
        atomic.write_jsonl(d / "docs.jsonl", rows.take_list(old, made))
        meta = {"format": FILES_FORMAT, "model": model, "commits": runs, "documents": len(docs),
                "texts": n_texts, "embed_chars": wholefiles.EMBED_CHARS, "embedding": stats,
                "name": atomic.hash_obj([FILES_FORMAT, runs, docs, model["sha256"]]),
                "grown": {"documents": len(docs) - len(new), "superseded": bool(base) and rows.keeps_base()}}
        atomic.write_json(d / "meta.json", meta)
        integrity.record(d)
    return meta


class VersionedFiles:
    """A versioned file index `build_files` wrote, opened for a model (refused if built with another)."""

    def __init__(self, directory: Path, model_dir: Path):
        self.directory = d = Path(directory)
        self.meta = _meta(d, "a versioned file index", FILES_FORMAT)
        model = index.check_model(d, self.meta, model_dir)
        docs = atomic.read_jsonl(d / "docs.jsonl")
        self._paths = [doc["path"] for doc in docs]
        self._lines = np.asarray([doc["lines"] for doc in docs], dtype=np.int64)
        self._occurrences = np.load(d / "occurrences.npy", mmap_mode="r")
        self._doc_text = np.load(d / "doc_text.npy", mmap_mode="r")
        self.vectors = index.load_vectors(d, self.meta["texts"], model["dim"])
        self._bm25 = termcounts.TermCounts(d / "bm25", len(docs))

    def view(self, commit: str) -> wholefiles.FileDocs:
        """The commit's files as documents, as `FileDocs.build` of them gives them."""
        run = commit_run(self.meta, commit, self.directory)
        doc = np.asarray(self._occurrences[run["start"]:run["end"]], dtype=np.int64)
        return wholefiles.FileDocs([self._paths[i] for i in doc], self._lines[doc],
                        np.asarray(self.vectors[np.asarray(self._doc_text)[doc]]), self._bm25.commit(doc))
