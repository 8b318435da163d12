"""The typed matrix (crmatrix.config): an arm's variables read once per planning, a Matrix that
cannot change under the plan, the CLI's light commands, and the system switches gone."""

import dataclasses
import json
import re
import subprocess
import sys

import pytest
from conftest import ROOT

from crmatrix import config

# Counts every reading of an arm's variables (each makes one ArmKnobs) while Snakemake plans the
# default matrix in this process, then prints the count and the number of arms.
COUNT_PARSES = r"""
import json, sys
from crmatrix.engine.knobs import ArmKnobs
calls = []
init = ArmKnobs.__init__
def counted(self, *a, **k):
    calls.append(1)
    init(self, *a, **k)
ArmKnobs.__init__ = counted
from snakemake.cli import main
try:
    main(["-n", "--cores", "1", "all"])
except SystemExit as e:
    assert not e.code, e.code
from crmatrix import config
print(json.dumps({"reads": len(calls), "arms": len(config.load("config/config.yaml").arms)}))
"""


def test_planning_the_default_matrix_reads_each_arm_once(tmp_path):
    out = subprocess.run([sys.executable, "-c", COUNT_PARSES], cwd=ROOT, capture_output=True, text=True,
                         timeout=600, check=True)
    counts = json.loads(out.stdout.strip().splitlines()[-1])
    # config.load above read them once more, after the count was taken
    assert counts["reads"] == counts["arms"] == 13


def test_a_matrix_cannot_be_changed():
    m = config.load(ROOT / "config" / "config.yaml")
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.top_k = 5
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.arms["baseline"].model = "other"
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.systems["builtin"].arms = ()


# What the light commands must not load: parsers, the engine's libraries, models, charts. (validate
# checks a gate's metric name against the metrics table, whose functions need numpy.)
HEAVY = ("tree_sitter", "bm25s", "Stemmer", "torch", "onnxruntime", "altair", "scipy", "transformers")
LOADED = r"""
import sys
from crmatrix import cli
try:
    cli.main(sys.argv[1:])
except SystemExit:
    pass
print("LOADED", " ".join(sorted({m.split(".")[0] for m in sys.modules})))
"""


@pytest.mark.parametrize("argv,heavy", [(["--help"], (*HEAVY, "numpy")), (["validate", "config/config.yaml"], HEAVY)])
def test_help_and_validate_load_no_heavy_library(argv, heavy):
    out = subprocess.run([sys.executable, "-c", LOADED, *argv], cwd=ROOT, capture_output=True, text=True, timeout=120)
    loaded = set(out.stdout.split("LOADED", 1)[1].split())
    assert "crmatrix" in loaded and not loaded & set(heavy), sorted(loaded & set(heavy))


def _sources():
    for path in sorted([*(ROOT / "src" / "crmatrix").rglob("*.py"), *(ROOT / "workflow").rglob("*.smk"),
                        *(ROOT / "workflow" / "scripts").glob("*.py")]):
        yield path.relative_to(ROOT).as_posix(), path.read_text()


def test_the_builtin_type_is_named_only_by_the_systems_package():
    named = [p for p, text in _sources() if re.search(r"""==\s*["']builtin["']|["']builtin["']\s*==""", text)
             and not p.startswith("src/crmatrix/systems/")]
    assert named == []


def test_no_system_is_probed_for_a_member():
    """The System base class gives every optional member a default, so nothing asks whether a
    system has one."""
    probes = [(p, m.group(0)) for p, text in _sources()
              for m in re.finditer(r"(hasattr|getattr)\((sys\w*|system\w*|cls|self\.system\w*)\b[^)]*\)", text)]
    assert probes == []


def test_an_index_of_bm25s_tokenizer_is_built_after_the_one_whose_embeddings_it_reads(tmp_path):
    """Two indexes of a corpus that embed the same texts alike (the baseline's, and a tokenizer
    arm's) are built one after the other, so the second reads the first's embeddings from the
    cache; an index that embeds other texts, or an arm sharing the baseline's index, waits for
    none."""
    from crmatrix.config.plan import Plan

    (tmp_path / "ds.json").write_text("[]")
    m = config.from_dict({
        "corpora": {"c": {"path": str(tmp_path)}},
        "datasets": {"d": {"file": str(tmp_path / "ds.json"), "corpus": "c"}},
        "systems": {"builtin": {"type": "builtin", "methods": ["hybrid", "bm25"]}},
        "arms": {"baseline": {}, "whole-ids": {"CRMATRIX_BM25_WHOLE_IDENTIFIERS": "1"},
                 "no-stem": {"CRMATRIX_BM25_STEM": "0"}, "2b": {"CODELENS_EMBED_HINT_INCLUDE_COMMENTS": "1"},
                 "2b-whole-ids": {"CODELENS_EMBED_HINT_INCLUDE_COMMENTS": "1", "CRMATRIX_BM25_WHOLE_IDENTIFIERS": "1"},
                 "2e": {"CODELENS_RANK_SPARSE_TERM_WEIGHT": "1"}}})
    plan = Plan(m)
    key = {arm: plan.index_key("builtin", arm, "c") for arm in m.arms}
    assert len(set(key.values())) == 5 and key["2e"] == key["baseline"]
    first = {arm: plan.index_inputs("builtin", "c", key[arm]).get("embedded_first") for arm in m.arms}
    index = "results/index/c/builtin/{}".format
    assert first == {"baseline": None, "whole-ids": index(key["baseline"]), "no-stem": index(key["baseline"]),
                     "2b": None, "2b-whole-ids": index(key["2b"]), "2e": None}
    assert plan.index_inputs("builtin", "c", key["baseline"]) == {
        "symbols": "results/symbols/c.jsonl", "manifest": "results/corpora/c/manifest.json",
        "model": plan.index_model("builtin", "c", key["baseline"])}
