import pytest

from crmatrix.engine import Engine
from crmatrix.engine.lexical import LexicalDoc, LexicalQuery, score
from crmatrix.hits import Hit, ranked
from crmatrix.symbols import Symbol


def sym(name, kind="function", parent="", path="src/app/mod.py", sig=None, line=1):
    return Symbol(name, kind, parent, path, "python", line, line + 1, sig if sig is not None else f"def {name}(x)",
                  "", "")


def s(symbol, query):
    return score(LexicalDoc.of(symbol), LexicalQuery.of(query))


@pytest.mark.parametrize("symbol,query,expected", [
    (sym("load_config", "constant"), "LOAD_CONFIG", 100.0),      # 1. exact name, case-insensitive
    (sym("load_config_file", "constant"), "config", 60.0),       # 2. name contains query
    (sym("run", "constant", sig="def run(retry_count)"), "retry_count", 30.0),  # 3. signature contains
    (sym("run", "constant", parent="Worker", sig=""), "worker.run", 20.0),  # 4. qualified name contains
    (sym("load_config", "constant"), "load config", 80.0),       # 5. snake form equals the name
    (sym("load_config", "constant"), "please load-config now", 70.0),  # 6. snake form contains the name
    (sym("load_config_file", "constant"), "load config", 65.0),  # 7. name contains the snake form
    # 8. tokens: 2 of 3 in the name, 0 in the signature -> 15 + 40*2/3
    (sym("parse_header", "constant", sig=""), "parse the header", 15 + 40 * 2 / 3),
    # tokens in the signature only: 5 + 20 * 1/2
    (sym("run", "constant", sig="def run(timeout)"), "timeout value", 5 + 20 * 0.5),
    # tokens in the path only: max(1 + 4 * 1/2, 1)
    (sym("run", "constant", sig=""), "app thing", 3.0),
    (sym("run", "constant", sig=""), "nothing here", None),
])
def test_rules_fire_in_order(symbol, query, expected):
    assert s(symbol, query) == (pytest.approx(expected) if expected is not None else None)


def test_token_score_is_capped_at_55():
    # all 3 tokens in name and signature: 15 + 40 + 5 = 60, capped
    assert s(sym("parse_header_line", "constant", sig="parse header line"), "line header parse") == 55.0


def test_kind_boosts():
    assert s(sym("parse_header", "constant", sig=""), "header") == 60.0
    assert s(sym("parse_header", "function", sig=""), "header") == 60.0          # no action verb
    assert s(sym("header_parse", "function", sig=""), "parse the header") == pytest.approx(15 + 40 * 2 / 3 + 8)
    assert s(sym("Header", "class", sig=""), "header") == 105.0


def test_short_tokens_and_empty_query():
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
