import json

import pytest

from crmatrix import CrmatrixError
from crmatrix.engine.knobs import INDEX_TIME_VARS, KNOWN_VARS, KnobError, Knobs, index_spec, resolve

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
    assert index_spec({COMMENTS: "1"}) == index_spec({COMMENTS: " true", SPARSE: "1",
                                                      "CODELENS_RANK_SPARSE_MAX": "40"}) == {"nl_tokens": True}
    assert index_spec({COMMENTS: "1"}) != index_spec({COMMENTS: "0"}) != index_spec({})
    assert index_spec({}) == {}


def test_index_spec_parses_and_clamps_every_index_time_variable():
    env = {"CODELENS_EMBED_HINT_LINES": "40", "CODELENS_EMBED_HINT_CHARS": "180", COMMENTS: "on", API: "1",
           "CODELENS_EMBED_HINT_STRICT_LITERALS": "0", "CODELENS_EMBED_HINT_STRICT_COMMENTS": "yes",
           AUTO: "false", AUTO_LANG: "Rust", "PATH": "/usr/bin"}
    assert index_spec(env) == {"hint_lines": 10, "hint_chars": 180, "nl_tokens": True, "api_calls": True,
                               "strict_literals": False, "strict_comments": True, "auto": False,
                               "language": "rust"}
    assert set(env) - {"PATH"} == INDEX_TIME_VARS
    with pytest.raises(KnobError):
        index_spec({"CODELENS_EMBED_HINT_AUTOLANG": "rust"})


def test_variable_sets():
    assert INDEX_TIME_VARS < KNOWN_VARS
    assert KNOWN_VARS - INDEX_TIME_VARS == {SPARSE, "CODELENS_RANK_SPARSE_THRESHOLD", "CODELENS_RANK_SPARSE_MAX",
                                            *FUSION_VARS}


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
    from crmatrix.engine.knobs import canonical

    env = {"CRMATRIX_FUSION": "WSI ", "CRMATRIX_WSI_WEIGHT": "0.50", "CRMATRIX_GRAPH_EXPAND": "yes",
           "CRMATRIX_RRF_K": "060", "CRMATRIX_MODEL": "MiniLM"}
    assert index_spec(env) == {}
    assert canonical(env) == {"CRMATRIX_FUSION": "wsi", "CRMATRIX_GRAPH_EXPAND": "1", "CRMATRIX_MODEL": "MiniLM",
                              "CRMATRIX_RRF_K": "60", "CRMATRIX_WSI_WEIGHT": "0.5"}
    with pytest.raises(KnobError, match=r"^unknown variable CRMATRIX_FUSON \(did you mean CRMATRIX_FUSION\?\)"):
        resolve({"CRMATRIX_FUSON": "rrf"}, None)
