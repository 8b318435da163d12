import numpy as np
import pytest

from crmatrix.engine import Engine
from crmatrix.engine.lexical import LexicalDoc, LexicalQuery, score
from crmatrix.hits import Hit, ranked
from crmatrix.symbols import Symbol


def sym(name, kind="constant", parent="", path="src/app/mod.py", sig=None, line=1):
    return Symbol(name, kind, parent, path, "python", line, line + 1, sig if sig is not None else f"def {name}(x)",
                  "", "")


def s(symbol, query):
    return score(LexicalDoc.of(symbol), LexicalQuery.of(query))


@pytest.mark.parametrize("symbol,query,expected", [
    (sym("load_config"), "LOAD_CONFIG", 100),                    # 1. exact name, case-insensitive
    (sym("load_config_file"), "config", 60),                     # 2. name contains query
    (sym("run", sig="def run(retry_count)"), "retry_count", 30),  # 3. signature contains
    (sym("run", parent="Worker", sig=""), "worker.run", 20),      # 4. qualified name contains
    (sym("load_config"), "load config", 80),                     # 5. snake form equals the name
    (sym("load_config"), "please load-config now", 70),          # 6. snake form contains the name
    (sym("load_config_file"), "load config", 65),                # 7. name contains the snake form
    (sym("parse_header", sig=""), "parse the header", 15 + 26),  # 8. 2/3 tokens in name: int(15 + 26.67)
    (sym("run", sig="def run(timeout)"), "timeout value", 15),   # signature only: int(5 + 20 * 1/2)
    (sym("run", sig=""), "app thing", 3),                        # path only: int(1 + 4 * 1/2)
    (sym("run", sig=""), "nothing here", None),
    (sym("FileWatcher", sig=""), "watcher events", 15 + 20),     # camel-case word of the name
])
def test_rules_fire_in_order(symbol, query, expected):
    assert s(symbol, query) == expected


def test_token_score_adds_truncated_signature_bonus_and_caps_at_55():
    # 1/3 in name -> int(28.33)=28, 2/3 in signature -> int(3.33)=3
    assert s(sym("header", sig="def header(line, width)"), "header line cols") == 31
    assert s(sym("parse_header_line", sig="parse header line"), "line header parse") == 55


def test_kind_boost_follows_the_verb_and_only_on_token_scores():
    assert s(sym("header_parse", "function", sig=""), "parse the header") == 41 + 8
    assert s(sym("header_parse", "class", sig=""), "parse the header") == 41        # verb: types get nothing
    assert s(sym("header_reader", "class", sig=""), "the header") == 15 + 20 + 5    # no verb: types +5
    assert s(sym("header_reader", "function", sig=""), "the header") == 35
    assert s(sym("Header", "class", sig=""), "header") == 100                     # rule 1: no boost


def test_query_tokens():
    assert LexicalQuery.of("a b-cd e_fg").tokens == ("cd", "fg")
    assert s(sym("x"), "   ") is None


def test_engine_breaks_ties_by_path_then_line_then_symbol():
    syms = [sym("get", path="b.py", line=5), sym("get", path="a.py", line=9), sym("get", path="a.py", line=2)]
    hits = Engine(syms).search("get", "lexical", 10)
    assert [(h.path, h.start_line) for h in hits] == [("a.py", 2), ("a.py", 9), ("b.py", 5)]
    assert ranked([Hit("a", "b", "function", 1, 1, 1.0), Hit("a", "a", "function", 1, 1, 1.0)], 1)[0].symbol == "a"


def test_engine_rejects_unknown_method():
    with pytest.raises(Exception, match="unknown method 'vibes'"):
        Engine([sym("x")]).search("x", "vibes", 5)


def test_a_suffix_blob_finds_the_holders_a_scan_finds():
    """`SuffixBlob` (a versioned index's shared blobs) answers as `Blob`'s scan does: repeats in
    one string, matches at either end, needles found nowhere or everywhere, non-ASCII and lone
    surrogates (JSON can hold them), the empty needle; and, as a scan, a needle holding the
    separator where two strings meet."""
    import random

    from crmatrix.engine.lexical import Blob, SuffixBlob

    rng = random.Random(7)
    alphabet = ["a", "b", "_", "é", "\ud800", "ab", "z"]
    texts = sorted({"".join(rng.choice(alphabet) for _ in range(rng.randint(0, 9))) for _ in range(300)})
    scan, suffixes = Blob(texts), SuffixBlob(texts)
    needles = {t[i:j] for t in texts for i in range(len(t)) for j in range(i, len(t) + 1)}
    needles |= {"", "q", "aaaaaaaaaaaaa", "b\x00a", f"{texts[3][-1:]}\x00{texts[4][:1]}", "é\ud800"}
    for needle in sorted(needles):
        assert suffixes.holders(needle).tolist() == scan.holders(needle).tolist(), needle
    assert len(suffixes.holders("a")) > 100 and suffixes.holders("a").dtype == np.int64
    assert SuffixBlob([]).holders("a").tolist() == []


def test_names_of_any_length_within_the_query_score_as_the_rules_say():
    """Rule 6 (the query's snake form holds the name) for names shorter than a trigram too, by
    the index as by `score`."""
    from crmatrix.engine.lexical import LexicalIndex

    symbols = [sym(n, sig="") for n in ("a_", "_b", "x_y", "load_config", "q_", "zz_qq")]
    query = "call a_ then _b and x_y to load_config"
    want = [s(symbol, query) for symbol in symbols]
    assert want == [70, 70, 70, 70, None, None]
    got = LexicalIndex(symbols).scores(query)
    assert [None if np.isnan(v) else int(v) for v in got] == want
