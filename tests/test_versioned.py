"""The versioned store and index of a repository's commits: each commit's symbols and engine
exactly what a plain extraction and a plain index of that commit give, with each distinct
content stored, tokenized and embedded once."""

import hashlib
import json
import re

import numpy as np
import pytest

from crmatrix import CrmatrixError, atomic
from crmatrix.engine import Engine, files, index, knobs
from crmatrix.engine.bm25 import BM25Index
from crmatrix.engine.embedtext import embedding_text
from crmatrix.engine.methods import FILE_METHODS, FUNCTION_METHODS, METHODS
from crmatrix.symbols import Symbol
from crmatrix.symbols.extract import extract_files
from crmatrix.symbols.record import sort_key
from crmatrix.versions import index as versioned
from crmatrix.versions.index import columns
from crmatrix.versions.store import CommitSymbols, SymbolStore, build, content_line

# --- a repository of three commits ------------------------------------------------------------

KEEP = '''"""Helpers that never change."""


def slugify(title):
    """Turn a title into a url slug."""
    return title.lower().replace(" ", "-")


class Cache:
    """A least recently used cache."""

    def get(self, key):
        return self.data.get(key)

    def evict_oldest(self):
        # drop the least recently used entry
        self.data.popitem(last=False)
'''
EDIT_1 = '''def parse_config(text):
    """Read settings from key value text."""
    return dict(line.split("=", 1) for line in text.splitlines())


def load_config(path):
    return parse_config(open(path).read())
'''
EDIT_2 = '''def parse_config(text):
    """Read settings from key value text, blank lines skipped."""
    lines = [line for line in text.splitlines() if line.strip()]
    return dict(line.split("=", 1) for line in lines)


def load_config(path):
    return parse_config(open(path).read())
'''
GONE = '''def fetch_page(url):
    """Download a web page."""
    return Session().get(url).text
'''
MOVED = '''def open_connection(host, timeout):
    """Open a network connection with a time limit."""
    return socket.create_connection((host, 80), timeout=timeout)
'''
SHIFT_1 = '''def first():
    return 1


def second():
    """The second helper."""
    return 2
'''
SHIFT_2 = '''def second():
    """The second helper."""
    return 2


def first():
    return 1
'''
# the same definition twice in one file: one content, two occurrences
ADDED = '''import sys

if sys.version_info >= (3,):
    def compat(frame):
        return frame.read()
else:
    def compat(frame):
        return frame.read()


def read_frame(stream):
    """Read one frame of the stream."""
    return compat(stream)
'''
FRAMES = '''class FrameReader:
    """Reads frames."""

    def read_frame(self):
        # read frame bytes until the end marker
        return self.stream.read_until(b"END")


def Décodé_Trame(flux, sep="→"):
    """Décode une trame (non-ASCII names, signatures and docs read back alike)."""
    return flux.split(sep)
'''

COMMITS = {
    "c1": {"pkg/keep.py": KEEP, "pkg/edit.py": EDIT_1, "pkg/gone.py": GONE, "pkg/old_place.py": MOVED,
           "pkg/shift.py": SHIFT_1},
    # edited, deleted, moved to another path, a function moved within its file, a file added
    "c2": {"pkg/keep.py": KEEP, "pkg/edit.py": EDIT_2, "pkg/net/new_place.py": MOVED, "pkg/shift.py": SHIFT_2,
           "pkg/added.py": ADDED},
    # the edit reverted, a copy of a file at another path, a class added
    "c3": {"pkg/keep.py": KEEP, "pkg/edit.py": EDIT_1, "pkg/net/new_place.py": MOVED, "pkg/shift.py": SHIFT_2,
           "pkg/added.py": ADDED, "pkg/copy_of_keep.py": KEEP, "pkg/frames.py": FRAMES},
}
BLOBS = {hashlib.sha1(text.encode()).hexdigest(): text for tree in COMMITS.values() for text in tree.values()}


def blob(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()


def listing(commits) -> dict:
    return {c: [(p, blob(t)) for p, t in COMMITS[c].items()] for c in commits}


def plain_symbols(commit, tmp_path):
    """A plain extraction of the commit's tree, written out."""
    root = tmp_path / "trees" / commit
    for path, text in COMMITS[commit].items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return extract_files(root, sorted(COMMITS[commit]))


def file_symbols(path, blob_id):
    from crmatrix.corpora.languages import language_for
    from crmatrix.symbols.extract import extract_source

    file_symbols.asked.append((path, blob_id))
    return extract_source(BLOBS[blob_id].encode(), path, language_for(path))


file_symbols.asked = []


# --- a fake model: a bag of hashed words, so the semantic ranking means something -------------

MODEL = {"sha256": "e" * 64, "dim": 16, "backend": "fake", "source": "test"}


def bag(text: str) -> np.ndarray:
    v = np.zeros(16, dtype=np.float32)
    for w in re.findall(r"[a-z]+", text.lower()):
        v[hashlib.sha256(w.encode()).digest()[0] % 16] += 1.0
    return v / max(float(np.linalg.norm(v)), 1e-6)


class CountingEmbedder:
    dim = 16

    def __init__(self):
        self.embedded: list[str] = []

    def encode(self, texts, on_batch=None):
        self.embedded += texts
        return np.stack([bag(t) for t in texts])


def encode_queries(queries):
    return np.stack([bag(q) for q in queries])


@pytest.fixture
def model(tmp_path, monkeypatch):
    """(model dir, the embedder every build gets)."""
    model_dir = tmp_path / "model"
    atomic.write_json(model_dir / "model.json", MODEL)
    embedder = CountingEmbedder()
    monkeypatch.setattr(index, "load_embedder", lambda meta, directory, threads: embedder)
    return model_dir, embedder


@pytest.fixture
def store(tmp_path):
    build(listing(COMMITS), file_symbols, tmp_path / "store")
    return SymbolStore(tmp_path / "store")


# --- the store ----------------------------------------------------------------------------------

def test_each_commit_reads_back_as_its_plain_extraction(store, tmp_path):
    occurrences = 0
    for commit in COMMITS:
        plain = plain_symbols(commit, tmp_path)
        assert store.symbols_of(commit) == plain
        occurrences += len(plain)
    # each distinct content once: the moved file and the copy are new contents (their path is
    # part of a content), the shifted functions and the reverted edit are not
    distinct = {content_line(s) for c in COMMITS for s in plain_symbols(c, tmp_path)}
    assert len(store) == len(distinct) == 21
    assert occurrences == 10 + 12 + 19 and store.meta["occurrences"] == occurrences
    assert [json.loads(line)["name"] for line in (store.directory / "contents.jsonl").read_text().splitlines()
            ].count("compat") == 1  # the duplicated definition is one content


def test_a_commits_symbols_in_some_files_are_its_symbols_of_them_and_only_their_contents_are_read(store,
                                                                                                   monkeypatch):
    """A task's base file, or the files its gold spans name, out of a commit of thousands."""
    path_of = [c["path"] for c in store.contents(range(len(store)))]
    read: list[list[int]] = []
    contents = SymbolStore.contents
    monkeypatch.setattr(SymbolStore, "contents", lambda self, ids: read.append(list(ids)) or contents(self, ids))
    for commit, tree in COMMITS.items():
        every = store.symbols_of(commit)
        for paths in ({"pkg/edit.py"}, {"pkg/keep.py", "pkg/frames.py"}, set(tree), {"pkg/none.py"}, set()):
            read.clear()
            assert store.symbols_in(commit, paths) == [s for s in every if s.path in paths]
            assert read == [sorted({c for c, _, _ in store.occurrences(commit).tolist() if path_of[c] in paths})]
    assert [s.name for s in store.symbols_in("c2", {"pkg/edit.py", "pkg/none.py"})] == ["parse_config", "load_config"]


def test_a_commits_symbols_iterated_are_its_items_and_the_next_commit_reads_only_what_changed(store, monkeypatch):
    """An evaluation passes over every symbol of each task's commit several times: one read per
    commit, and contents the previous commit had are not read again."""
    read: list[list[int]] = []
    contents = SymbolStore.contents
    monkeypatch.setattr(SymbolStore, "contents", lambda self, ids: read.append(list(ids)) or contents(self, ids))
    commits = {c: CommitSymbols(store, store.occurrences(c)) for c in ("c1", "c2")}
    first = commits["c1"]
    assert [first[i] for i in range(len(first))] == list(first) == list(first) == store.symbols_of("c1")
    read.clear()
    second = list(commits["c2"])
    c1_rows = {tuple(row) for row in store.occurrences("c1").tolist()}
    new = sorted({c for c, start, end in store.occurrences("c2").tolist() if (c, start, end) not in c1_rows})
    assert read == [new] and 0 < len(new) < len(second)  # one pass, of what c1 did not have
    assert second == store.symbols_of("c2") and read == [new, []]  # the same commit again: nothing read
    # an occurrence both commits have is the same symbol, made once
    c1 = {(s.path, s.name, s.start_line): s for s in first}
    assert any(c1.get((s.path, s.name, s.start_line)) is s for s in second)


def test_each_distinct_file_is_asked_once_and_the_bytes_do_not_depend_on_order(tmp_path):
    file_symbols.asked.clear()
    build(listing(COMMITS), file_symbols, tmp_path / "a")
    assert sorted(file_symbols.asked) == sorted({pb for files in listing(COMMITS).values() for pb in files})
    assert len(file_symbols.asked) == 11
    given = {pb: file_symbols(*pb) for pb in list(file_symbols.asked)}
    build(dict(reversed(listing(COMMITS).items())), given, tmp_path / "b")  # a dict, commits in another order
    for name in ("contents.jsonl", "contents.offsets.npy", "occurrences.npy", "meta.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name


def tree_bytes(directory):
    return {f.relative_to(directory).as_posix(): f.read_bytes() for f in sorted(directory.rglob("*")) if f.is_file()}


@pytest.mark.parametrize(("before", "now"), [(["c1"], ["c1", "c2", "c3"]), (["c2", "c3"], ["c1", "c2"])])
def test_a_store_grown_from_another_asks_only_for_new_files_and_writes_a_cold_builds_bytes(before, now, tmp_path):
    """The second: the base holds files the new store drops (c3's), whose contents go."""
    build(listing(before), file_symbols, tmp_path / "base")
    build(listing(now), file_symbols, tmp_path / "cold")
    file_symbols.asked.clear()
    meta = build(listing(now), file_symbols, tmp_path / "grown", base=SymbolStore(tmp_path / "base"))
    held = {pb for c in before for pb in listing([c])[c]}
    wanted = {pb for c in now for pb in listing([c])[c]}
    assert sorted(file_symbols.asked) == sorted(wanted - held) and file_symbols.asked
    assert tree_bytes(tmp_path / "grown") == tree_bytes(tmp_path / "cold")
    assert meta["grown"]["files"] == len(wanted & held) > 0
    grown = SymbolStore(tmp_path / "grown")
    for commit in now:
        assert grown.symbols_of(commit) == plain_symbols(commit, tmp_path)


def test_bad_input_is_one_line_naming_it(tmp_path):
    with pytest.raises(CrmatrixError, match="commit c1: lists pkg/a.py twice"):
        build({"c1": [("pkg/a.py", "x"), ("pkg/a.py", "y")]}, {}, tmp_path / "s")
    with pytest.raises(CrmatrixError, match="no symbols given for pkg/a.py at blob x"):
        build({"c1": [("pkg/a.py", "x")]}, {}, tmp_path / "s")
    with pytest.raises(CrmatrixError, match="include 'slugify' of pkg/other.py"):
        build({"c1": [("pkg/a.py", blob(KEEP))]}, lambda p, b: file_symbols("pkg/other.py", b), tmp_path / "s")
    assert not (tmp_path / "s").exists()
    build({"c1": [("pkg/keep.py", blob(KEEP))]}, file_symbols, tmp_path / "s")
    with pytest.raises(CrmatrixError, match="holds no commit c9"):
        SymbolStore(tmp_path / "s").symbols_of("c9")


# --- the index and each commit's engine ---------------------------------------------------------

QUERIES = ["read frame", "open a network connection with a time limit", "read settings from key value text",
           "drop the least recently used entry", "download a web page", "turn a title into a url slug", "compat",
           "parse_config", "Cache", "load config path config", "the second helper", "return frame read frame",
           "read_frame stream", "décodé_trame", "trame sep →"]
OFF = {"CODELENS_EMBED_HINT_AUTO": "0"}
NL_API = {"CODELENS_EMBED_HINT_INCLUDE_COMMENTS": "1", "CODELENS_EMBED_HINT_INCLUDE_API_CALLS": "1"}
SPARSE = {"CODELENS_RANK_SPARSE_TERM_WEIGHT": "1", "CODELENS_RANK_SPARSE_THRESHOLD": "40",
          "CODELENS_RANK_SPARSE_MAX": "40"}
ARMS = {"baseline": OFF, "2b2c-only": {**OFF, **NL_API}, "2e-only": {**OFF, **SPARSE},
        "stacked": {**OFF, **NL_API, **SPARSE}, "rrf": {**OFF, "CRMATRIX_FUSION": "rrf"},
        "wsi-2e": {**OFF, **SPARSE, "CRMATRIX_FUSION": "wsi"},
        "bm25-tokenizer": {**OFF, "CRMATRIX_BM25_WHOLE_IDENTIFIERS": "1", "CRMATRIX_BM25_STEM": "0",
                           "CRMATRIX_BM25_STOPWORDS": "0"}}


def hits(engine, methods=METHODS):
    return {f"{m}: {q}": [h.to_dict() for h in engine.search(q, m, 100)] for m in methods for q in QUERIES}


@pytest.mark.parametrize("arm", sorted(ARMS))
def test_a_commits_engine_is_the_plain_engine_of_its_symbols(arm, store, model, tmp_path):
    model_dir, _ = model
    kn = knobs.resolve(ARMS[arm], "python")
    versioned.build(store, kn, model_dir, tmp_path / "cache", tmp_path / "vindex")
    vindex = versioned.VersionedIndex(tmp_path / "vindex", store, kn, model_dir)
    for commit in COMMITS:
        symbols = plain_symbols(commit, tmp_path)
        out = tmp_path / f"plain-{commit}"
        index.build(symbols, kn, model_dir, tmp_path / "cache", out)
        vectors, _ = index.load(out, symbols, kn, model_dir)
        plain = Engine(symbols, kn, vectors, encode_queries, bm25=index.load_bm25(out, symbols))
        view = vindex.engine(commit, encode_queries=encode_queries)
        assert list(view.symbols) == symbols
        np.testing.assert_array_equal(view.vectors, vectors)
        got, want = hits(view, METHODS + FUNCTION_METHODS), hits(plain, METHODS + FUNCTION_METHODS)
        assert json.dumps(got) == json.dumps(want), commit
        # not vacuous: every method finds something for most queries
        assert all(sum(len(got[f"{m}: {q}"]) > 0 for q in QUERIES) >= 7 for m in METHODS + FUNCTION_METHODS)
        for q in QUERIES:  # BM25 bit for bit, against bm25s built here too
            built = BM25Index.build(symbols, kn).scores(q)
            assert view._bm25.scores(q).tobytes() == built.tobytes() == plain._bm25.scores(q).tobytes()


def test_a_commits_paths_swerank_corpus_and_file_units_read_no_content(store, model, tmp_path, monkeypatch):
    """What an evaluation of file gold asks of every symbol of a commit (its path, and for
    swerank-bm25 whether it is a function of a kept file) comes from the store's and index's
    arrays: no content is read, and each answer is the one the symbols give."""
    from crmatrix.corpora.candidates import SWERANK, candidate
    from crmatrix.datasets.relevance import gold_units
    from crmatrix.datasets.tasks import Task
    from crmatrix.engine.lexical import FUNCTION_KINDS
    from crmatrix.evaluation.evaluate import CorpusUnits
    from crmatrix.symbols import paths

    model_dir, _ = model
    kn = knobs.resolve(OFF, "python")
    versioned.build(store, kn, model_dir, tmp_path / "cache", tmp_path / "vindex")
    vindex = versioned.VersionedIndex(tmp_path / "vindex", store, kn, model_dir)
    read: list[list[int]] = []
    contents = SymbolStore.contents
    monkeypatch.setattr(SymbolStore, "contents", lambda self, ids: read.append(list(ids)) or contents(self, ids))
    task = Task("t", "frames", "issue", {"type": "file_set", "file_set": ["pkg/frames.py"]}, "repo")
    for commit in COMMITS:
        view = vindex.engine(commit)
        got = (paths(view.symbols), view._swerank_index()[0].tolist(), CorpusUnits(view.symbols).files,
               gold_units([task], view.symbols))
        assert read == []
        symbols = store.symbols_of(commit)
        assert got == ([s.path for s in symbols],
                       [i for i, s in enumerate(symbols) if s.kind in FUNCTION_KINDS and candidate(SWERANK, s.path)],
                       {s.path for s in symbols}, {"t": (["pkg/frames.py"], None)})
        assert len(set(got[0])) >= 5 and 0 < len(got[1]) < len(symbols)
        read.clear()


def test_bm25_counts_a_repeated_content_as_often_as_it_occurs(store, model, tmp_path):
    model_dir, _ = model
    kn = knobs.resolve(OFF, "python")
    versioned.build(store, kn, model_dir, tmp_path / "cache", tmp_path / "vindex")
    view = versioned.VersionedIndex(tmp_path / "vindex", store, kn, model_dir).engine("c2")
    compat = [i for i, s in enumerate(view.symbols) if s.name == "compat"]
    assert len(compat) == 2 and view.symbols[compat[0]].start_line != view.symbols[compat[1]].start_line
    scores = view._bm25.scores("compat frame")
    assert scores[compat[0]] == scores[compat[1]] > 0
    want = BM25Index.build(list(view.symbols)).scores("compat frame")
    assert scores.tobytes() == want.tobytes()


def test_a_word_is_looked_for_once_for_all_commits_and_across_two_names_as_the_commit_orders_them(
        store, model, tmp_path, monkeypatch):
    """A commit's lexical ranker looks words up in its index's blobs of each field's distinct
    strings, which every commit's engine shares: a word is scanned for once per field, however
    many commits a job asks of. A word that holds the separator could match across two strings,
    which depends on their neighbours: the commit's own order decides, as in a plain engine."""
    from crmatrix.engine.lexical import Blob, SuffixBlob

    model_dir, _ = model
    kn = knobs.resolve(OFF, "python")
    versioned.build(store, kn, model_dir, tmp_path / "cache", tmp_path / "vindex")
    vindex = versioned.VersionedIndex(tmp_path / "vindex", store, kn, model_dir)
    queries = ["read the frame bytes", "load config path", "cache get"]
    want = {(c, q): [h.to_dict() for h in Engine(plain_symbols(c, tmp_path), kn).search(q, "lexical", 100)]
            for c in COMMITS for q in queries}
    scanned, scan = [], SuffixBlob._scan
    monkeypatch.setattr(SuffixBlob, "_scan",
                        lambda blob, needle: scanned.append((id(blob), needle)) or scan(blob, needle))
    for commit in COMMITS:
        view = vindex.engine(commit)
        for q in queries:
            assert [h.to_dict() for h in view.search(q, "lexical", 100)] == want[commit, q], (commit, q)
        if commit == "c1":
            after_first = len(scanned)
            assert after_first > 0 and len(set(scanned)) == after_first  # each (blob, word) once
    assert len(scanned) == after_first  # c2 and c3 scanned nothing: every word was c1's
    monkeypatch.setattr(SuffixBlob, "_scan", scan)
    # the separator between two of c3's names, in its order: the plain engine finds the first of them
    view, symbols = vindex.engine("c3"), plain_symbols("c3", tmp_path)
    plain = Engine(symbols, kn)
    i = next(i for i in range(len(symbols) - 1)
             if symbols[i].path != symbols[i + 1].path and symbols[i + 1].name[:3].isalpha())
    across = f"{symbols[i].name[-3:]}{Blob.SEP}{symbols[i + 1].name[:3]}".lower()
    want = [h.to_dict() for h in plain.search(across, "lexical", 100)]
    assert (symbols[i].path, symbols[i].name, 60.0) in [(h["path"], h["symbol"], h["score"]) for h in want]
    assert [h.to_dict() for h in view.search(across, "lexical", 100)] == want


def test_ties_break_by_path_line_and_name_as_a_plain_engine_breaks_them(model, tmp_path):
    model_dir, _ = model

    def sym(path, name, line, end):
        return Symbol(name, "function", "", path, "python", line, end, f"def {name}()", "", f"def {name}(): pass")

    # same path and line, names out of order; equal names and lines in two paths; one path a prefix of another
    given = {("b.py", "1"): [sym("b.py", "load_b", 3, 3), sym("b.py", "load_a", 3, 4), sym("b.py", "load", 1, 1)],
             ("a.py", "1"): [sym("a.py", "load", 1, 1)], ("a.py/x.py", "1"): [sym("a.py/x.py", "load", 1, 1)]}
    build({"c": list(given)}, given, tmp_path / "s")
    store = SymbolStore(tmp_path / "s")
    symbols = sorted((s for syms in given.values() for s in syms), key=sort_key)
    assert store.symbols_of("c") == symbols
    kn = knobs.resolve(OFF, "python")
    versioned.build(store, kn, model_dir, tmp_path / "cache", tmp_path / "i")
    view = versioned.VersionedIndex(tmp_path / "i", store, kn, model_dir).engine("c")
    plain = Engine(symbols, kn)
    np.testing.assert_array_equal(view._tie, plain._tie)
    got = [(h.path, h.symbol, h.score) for h in view.search("load", "lexical", 10)]
    assert got == [(h.path, h.symbol, h.score) for h in plain.search("load", "lexical", 10)]
    assert got[3:] == [("b.py", "load_a", 60.0), ("b.py", "load_b", 60.0)]


def test_a_grown_store_embeds_only_the_new_texts(model, tmp_path):
    model_dir, embedder = model
    kn = knobs.resolve({**OFF, **NL_API}, "python")
    build(listing(["c1"]), file_symbols, tmp_path / "s1")
    meta = versioned.build(SymbolStore(tmp_path / "s1"), kn, model_dir, tmp_path / "cache", tmp_path / "i1")
    first = {embedding_text(s, kn) for s in plain_symbols("c1", tmp_path)}
    assert sorted(embedder.embedded) == sorted(first) and meta["embedding"]["embedded"] == len(first) == 10
    embedder.embedded.clear()
    build(listing(["c1", "c2"]), file_symbols, tmp_path / "s12")
    meta = versioned.build(SymbolStore(tmp_path / "s12"), kn, model_dir, tmp_path / "cache", tmp_path / "i12")
    new = {embedding_text(s, kn) for s in plain_symbols("c2", tmp_path)} - first
    # the moved file's texts are new (the path is in the text); shifted and unchanged ones are not
    assert sorted(embedder.embedded) == sorted(new) and len(new) == 4
    assert meta["embedding"] == {**meta["embedding"], "embedded": 4, "cached": 10}


def test_an_index_refuses_another_store_other_knobs_or_another_model(store, model, tmp_path):
    model_dir, _ = model
    kn = knobs.resolve(OFF, "python")
    versioned.build(store, kn, model_dir, tmp_path / "cache", tmp_path / "vindex")
    build(listing(["c1"]), file_symbols, tmp_path / "other")
    with pytest.raises(CrmatrixError, match=r"vindex: built from store \w{12}, but .*other is \w{12}; rebuild it"):
        versioned.VersionedIndex(tmp_path / "vindex", SymbolStore(tmp_path / "other"), kn, model_dir)
    nl = knobs.resolve({**OFF, **NL_API}, "python")
    with pytest.raises(CrmatrixError, match="built with other index-time knobs than the arm's: nl_tokens=False"):
        versioned.VersionedIndex(tmp_path / "vindex", store, nl, model_dir)
    vindex = versioned.VersionedIndex(tmp_path / "vindex", store, kn, model_dir)
    with pytest.raises(CrmatrixError, match="other index-time knobs"):
        vindex.engine("c1", nl)
    assert vindex.engine("c1", knobs.resolve({**OFF, **SPARSE}, "python")).knobs.sparse  # query-time: free
    other = tmp_path / "model2"
    atomic.write_json(other / "model.json", {**MODEL, "sha256": "d" * 64})
    with pytest.raises(CrmatrixError, match="built with model eeeeeeeeeeee, but the arm's model"):
        versioned.VersionedIndex(tmp_path / "vindex", store, kn, other)
    (tmp_path / "vindex" / "ties" / "name.npy").write_bytes(b"x")
    with pytest.raises(CrmatrixError, match="name.npy"):
        versioned.VersionedIndex(tmp_path / "vindex", store, kn, model_dir)


def built_bytes(directory):
    """An index's bytes but its meta (which times the build) and the checksums of it."""
    return {k: v for k, v in tree_bytes(directory).items() if k not in ("meta.json", "crmatrix-checksums.json")}


@pytest.mark.parametrize(("before", "now"), [(["c1"], ["c1", "c2", "c3"]), (["c2", "c3"], ["c1", "c2"])])
def test_an_index_grown_from_another_computes_only_new_contents_and_writes_a_cold_builds_arrays(
        before, now, model, tmp_path):
    model_dir, embedder = model
    kn = knobs.resolve(ARMS["2b2c-only"], "python")
    build(listing(before), file_symbols, tmp_path / "s0")
    build(listing(now), file_symbols, tmp_path / "s1")
    store = SymbolStore(tmp_path / "s1")
    versioned.build(SymbolStore(tmp_path / "s0"), kn, model_dir, tmp_path / "cache", tmp_path / "i0")
    cold = versioned.build(store, kn, model_dir, tmp_path / "cold-cache", tmp_path / "cold")
    embedder.embedded.clear()
    read = []
    contents = SymbolStore.contents
    SymbolStore.contents = lambda self, ids: read.append(list(ids)) or contents(self, ids)
    try:
        meta = versioned.build(store, kn, model_dir, tmp_path / "cache", tmp_path / "grown", base=tmp_path / "i0")
    finally:
        SymbolStore.contents = contents
    assert built_bytes(tmp_path / "grown") == built_bytes(tmp_path / "cold")
    old = set(map(bytes, SymbolStore(tmp_path / "s0").keys()))
    new = [i for i, k in enumerate(map(bytes, store.keys())) if k not in old]
    assert read == [new] and meta["grown"]["contents"] == len(store) - len(new) > 0
    # the new contents' texts the base has not are embedded (neither were they cached)
    got = meta["embedding"]
    assert meta["texts"] == cold["texts"] == got["reused"] + got["embedded"] and got["cached"] == 0
    assert got["embedded"] == len(embedder.embedded) == len(set(embedder.embedded)) > 0 and got["reused"] > 0
    view, plain = (versioned.VersionedIndex(tmp_path / d, store, kn, model_dir) for d in ("grown", "cold"))
    for commit in now:
        assert hits(view.engine(commit, encode_queries=encode_queries)) == hits(
            plain.engine(commit, encode_queries=encode_queries))
    file_read = []
    versioned.build_files(listing(before), lambda p, b: BLOBS[b], model_dir, tmp_path / "cache", tmp_path / "f0")
    versioned.build_files(listing(now), lambda p, b: BLOBS[b], model_dir, tmp_path / "cache", tmp_path / "fcold")
    fmeta = versioned.build_files(listing(now), lambda p, b: file_read.append((p, b)) or BLOBS[b], model_dir,
                                  tmp_path / "cache", tmp_path / "fgrown", base=tmp_path / "f0")
    assert built_bytes(tmp_path / "fgrown") == built_bytes(tmp_path / "fcold")
    held = {pb for c in before for pb in listing([c])[c]}
    assert file_read == sorted({pb for c in now for pb in listing([c])[c]} - held) and fmeta["grown"]["documents"]


def test_an_index_without_vectors_grows_from_one_without_vectors(tmp_path):
    """A system that ranks by no vectors keeps bases without vectors, and grows from them: a
    symbol and a file index grown write a cold build's bytes (a grown one once asked its base
    for the row texts only an index with vectors holds)."""
    kn = knobs.resolve(ARMS["baseline"], "python")
    build(listing(["c1"]), file_symbols, tmp_path / "s0")
    build(listing(["c1", "c2"]), file_symbols, tmp_path / "s1")
    store = SymbolStore(tmp_path / "s1")
    versioned.build(SymbolStore(tmp_path / "s0"), kn, None, tmp_path / "cache", tmp_path / "i0")
    versioned.build(store, kn, None, tmp_path / "cache", tmp_path / "cold")
    meta = versioned.build(store, kn, None, tmp_path / "cache", tmp_path / "grown", base=tmp_path / "i0")
    assert built_bytes(tmp_path / "grown") == built_bytes(tmp_path / "cold") and meta["grown"]["contents"] > 0
    versioned.build_files(listing(["c1"]), lambda p, b: BLOBS[b], None, tmp_path / "cache", tmp_path / "f0")
    versioned.build_files(listing(["c1", "c2"]), lambda p, b: BLOBS[b], None, tmp_path / "cache", tmp_path / "fcold")
    fmeta = versioned.build_files(listing(["c1", "c2"]), lambda p, b: BLOBS[b], None, tmp_path / "cache",
                                  tmp_path / "fgrown", base=tmp_path / "f0")
    assert built_bytes(tmp_path / "fgrown") == built_bytes(tmp_path / "fcold") and fmeta["grown"]["documents"]


def test_an_index_does_not_grow_from_one_of_other_knobs_or_another_model(store, model, tmp_path):
    model_dir, _ = model
    versioned.build(store, knobs.resolve(OFF, "python"), model_dir, tmp_path / "c", tmp_path / "i0")
    with pytest.raises(CrmatrixError, match="index-time"):
        versioned.build(store, knobs.resolve(ARMS["2b2c-only"], "python"), model_dir, tmp_path / "c", tmp_path / "i1",
                        base=tmp_path / "i0")
    other = tmp_path / "model2"
    atomic.write_json(other / "model.json", {**MODEL, "sha256": "d" * 64})
    with pytest.raises(CrmatrixError, match="built with model eeeeeeeeeeee"):
        versioned.build(store, knobs.resolve(OFF, "python"), other, tmp_path / "c", tmp_path / "i1",
                        base=tmp_path / "i0")
    assert not (tmp_path / "i1").exists()


@pytest.mark.parametrize("chunk", [2, 4096])
def test_a_column_gathers_any_rows_joined_with_where_each_starts(chunk, tmp_path, monkeypatch):
    monkeypatch.setattr(columns, "CHUNK", chunk)
    strings = ["", "abc", "é→ß", "\ud800x", "日本語", "", "z"]  # empty, multi-byte, a lone surrogate
    columns.save(strings, tmp_path, "c")
    rows = [2, 0, 4, 4, 3, 6, 5, 1]
    text, starts = columns.Column(tmp_path, "c").joined(np.array(rows), "\x00")
    assert text == "\x00".join(strings[r] for r in rows)
    assert starts.tolist() == [0, 4, 5, 9, 13, 16, 18, 19]
    text, starts = columns.Column(tmp_path, "c").joined(np.array([], dtype=np.int64))
    assert text == "" and starts.size == 0


# --- whole files as documents --------------------------------------------------------------------

def test_a_commits_files_are_the_plain_documents_of_its_tree(model, tmp_path):
    model_dir, embedder = model
    read = lambda path, blob_id: BLOBS[blob_id].encode()  # noqa: E731
    meta = versioned.build_files(listing(COMMITS), read, model_dir, tmp_path / "cache", tmp_path / "findex")
    assert meta["documents"] == 11 and meta["texts"] == 11  # the copy of keep.py is its own document
    vfiles = versioned.VersionedFiles(tmp_path / "findex", model_dir)
    for commit, tree in COMMITS.items():
        plain = files.FileDocs.build(tree.items(), lambda texts: np.stack([bag(t) for t in texts]))
        view = vfiles.view(commit)
        assert view.paths == plain.paths == sorted(tree)
        assert view.lines.tolist() == plain.lines.tolist() == [t.count("\n") for _, t in sorted(tree.items())]
        for q in QUERIES:
            assert view.bm25.scores(q).tobytes() == plain.bm25.scores(q).tobytes()
        got = hits(Engine([], vectors=None, encode_queries=encode_queries, files=view), FILE_METHODS)
        want = hits(Engine([], vectors=None, encode_queries=encode_queries, files=plain), FILE_METHODS)
        assert json.dumps(got) == json.dumps(want), commit
    top = Engine([], encode_queries=encode_queries, files=vfiles.view("c3")).search("read frame", "file-bm25", 2)
    assert [(h.path, h.symbol, h.kind, h.start_line, h.end_line) for h in top] == [
        ("pkg/added.py", "pkg/added.py", "file", 1, 13), ("pkg/frames.py", "pkg/frames.py", "file", 1, 11)]


def test_file_methods_need_files(tmp_path):
    with pytest.raises(CrmatrixError, match="file-bm25 needs the corpus's files as documents"):
        Engine([]).search("x", "file-bm25", 3)
    with pytest.raises(CrmatrixError, match="unknown method 'files'.*file-semantic"):
        Engine([]).search("x", "files", 3)


@pytest.mark.parametrize("stem", [True, False])
def test_term_counts_of_texts_from_their_shared_lines_are_the_tokenizers(stem, tmp_path):
    """A text's term counts are summed from its distinct lines', each tokenized once for every
    text: the same counts and lengths as tokenizing each text whole, whatever its line breaks
    (CRLF, blank and repeated lines, a Unicode line separator inside a line, none at all)."""
    from collections import Counter

    from crmatrix.engine.bm25 import Tokenizer
    from crmatrix.versions.index.postings import Postings
    from crmatrix.versions.index.termcounts import LENGTHS, TERMS
    from crmatrix.versions.index.termcounts import build as build_counts

    texts = ["def load_config(path):\n    return read(path)\n", "x\r\nfoo_bar\r\nfooBar baz\r\n", "", "\n\n",
             "fooBar baz\nfooBar baz\nthe other one", "déjà\u2028vu wörds\nreturn read(path)", "return read(path)"]
    kn = knobs.resolve({**OFF, "CRMATRIX_BM25_STEM": "1" if stem else "0"}, "python")
    assert kn.bm25_stem is stem
    build_counts(iter(texts), tmp_path / "bm25", knobs=kn)
    tokens = Tokenizer(Tokenizer.settings(kn))(texts)
    assert np.load(tmp_path / "bm25" / LENGTHS).tolist() == [len(t) for t in tokens]
    stored, got = Postings(tmp_path / "bm25" / TERMS), [Counter() for _ in texts]
    for word in {w for t in tokens for w in t}:
        for item, n in zip(*stored.get(word), strict=True):
            got[item][word] = int(n)
    assert got == [Counter(t) for t in tokens] and sum(map(len, got)) == len(stored.part().item)
