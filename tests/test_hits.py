"""The one deterministic order of hits that third-party systems get from `hits.ranked`."""

from crmatrix.hits import Hit, docid, ranked


def test_ties_are_broken_by_path_then_line_then_symbol():
    hits = [Hit("b.py", "a", "function", 1, 2, 1.0), Hit("a.py", "z", "function", 9, 9, 1.0),
            Hit("a.py", "y", "method", 9, 12, 1.0), Hit("a.py", "x", "function", 20, 21, 1.0),
            Hit("c.py", "q", "class", 1, 1, 2.0)]
    order = [(h.path, h.start_line, h.symbol) for h in ranked(hits, 10)]
    assert order == [("c.py", 1, "q"), ("a.py", 9, "y"), ("a.py", 9, "z"), ("a.py", 20, "x"), ("b.py", 1, "a")]
    assert ranked(list(reversed(hits)), 2) == ranked(hits, 10)[:2]  # insertion order never matters


def test_docid_names_path_line_and_symbol():
    assert docid(Hit("src/a.py", "parse", "function", 7, 9, 0.5)) == "src/a.py:7:parse"
