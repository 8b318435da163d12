"""The reference whole-file BM25 (tests/bm25_reference.py) against hand arithmetic, bm25s and the engine's tokenizer."""

import math

import bm25s
import numpy as np
import pytest
from bm25_reference import acc_at, rank_files, scores, tokens

from crmatrix.engine.bm25 import Tokenizer

TEXTS = ["def parseHTTPResponse(raw_bytes):\n    return the_parser.parse(raw_bytes)  # Parsing of HTTP",
         "class ConfigLoader:\n    '''Loads the configs from utf8 files, and is not a JSONDecoder.'''",
         "Ünïcode naïve café _private __dunder__ x1 a b io 42 IOError getHTTP2Server",
         ""]


def test_the_tokens_are_the_engines():
    engine = Tokenizer(Tokenizer.settings())
    assert [tokens(t) for t in TEXTS] == engine(TEXTS)
    assert tokens(TEXTS[0]) == ["def", "pars", "http", "respons", "raw", "byte", "return", "parser", "pars", "raw",
                                "byte", "pars", "http"]


def test_scores_by_hand():
    files = {"one.py": "alpha beta", "two.py": "alpha alpha gamma delta", "three.py": "epsilon"}
    avgdl = 7 / 3
    idf_alpha, idf_gamma = math.log(1 + 1.5 / 2.5), math.log(1 + 2.5 / 1.5)

    def part(idf, tf, length):
        return idf * tf / (tf + 1.5 * (0.25 + 0.75 * length / avgdl))

    assert scores(files, "alpha gamma") == pytest.approx({
        "one.py": part(idf_alpha, 1, 2), "two.py": part(idf_alpha, 2, 4) + part(idf_gamma, 1, 4), "three.py": 0.0})
    assert rank_files(files, "alpha gamma") == ["two.py", "one.py"]  # three.py holds no query token
    # a repeated query token counts twice, an unknown one not at all
    assert scores(files, "gamma gamma zeta")["two.py"] == pytest.approx(2 * part(idf_gamma, 1, 4))


def test_scores_are_bm25s_defaults():
    files = {f"f{i}.py": t for i, t in enumerate(TEXTS[:3])}
    files["f3.py"] = "http parser parser loader response " * 3
    docs = [tokens(t) for t in files.values()]
    vocab = {t: i for i, t in enumerate(sorted({t for d in docs for t in d}))}
    model = bm25s.BM25()
    model.index(([[vocab[t] for t in d] for d in docs], vocab), show_progress=False)
    for query in ("parse the HTTP response", "config loader loader", "unicode error"):
        ids = [vocab[t] for t in tokens(query) if t in vocab]
        expected = model.get_scores(ids)
        got = scores(files, query)
        assert np.allclose([got[p] for p in files], expected, rtol=1e-6, atol=1e-7), query


def test_ties_by_path_and_acc():
    files = {"b.py": "token", "a.py": "token", "c.py": "other"}
    ranked = rank_files(files, "token")
    assert ranked == ["a.py", "b.py"]
    assert [acc_at(ranked, {"a.py", "b.py"}, k) for k in (1, 2)] == [0.0, 1.0]
    assert acc_at(ranked, {"c.py"}, 10) == 0.0 and acc_at(ranked, set(), 10) == 0.0
