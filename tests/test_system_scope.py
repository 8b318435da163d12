"""What a system's config may say about its place in the matrix beyond its arms: the datasets
it runs on (`datasets:`), and the workflow's model exports it reads (`{model:NAME}`).

The checks and plans are asked of the config and of its `Plan` directly, then of Snakemake
with dry runs over a tiny project; one real run (slow) shows the placeholder filled and the
model's hash recorded."""

import json
import re
from pathlib import Path

import pytest
import yaml
from conftest import snakemake
from test_systems import CORPUS, DATASET, INDEXED

from crmatrix import CrmatrixError, config
from crmatrix.config.plan import Plan
from crmatrix.embed.models import model_files_sha256
from crmatrix.systems import templates

MODEL = {"config.json": json.dumps({"hidden_size": 4}), "weights.bin": "fake weights"}
# The index command proves it was handed the export: it fails unless {model:m} is a directory
# holding the model.json rule prepare_model writes.
MODEL_INDEX = ["sh", "-c", 'test -f "$0/model.json" && exec "$@"', "{model:m}", *INDEXED["index"]]


def _config(root: Path) -> dict:
    return {
        "corpora": {"fake": {"path": str(root / "src")}},
        "datasets": {"ds": {"file": str(root / "ds.json"), "corpus": "fake"},
                     "ds2": {"file": str(root / "ds.json"), "corpus": "fake"}},
        "models": {"m": {"source": str(root / "model")}, "other": {"source": str(root / "model")}},
        "default_model": "m",
        "systems": {
            "builtin": {"type": "builtin", "methods": ["bm25"]},
            "peer": {"type": "command", "datasets": ["ds"], "options": {**INDEXED, "index": MODEL_INDEX}},
        },
        "arms": {"baseline": {}},
        "headline_method": "bm25",
    }


@pytest.fixture
def project(tmp_path):
    for rel, text in {**{f"src/{k}": v for k, v in CORPUS.items()},
                      **{f"model/{k}": v for k, v in MODEL.items()}}.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    (tmp_path / "ds.json").write_text(json.dumps(DATASET))
    return tmp_path


def _error(cfg: dict) -> str:
    with pytest.raises(CrmatrixError) as e:
        config.from_dict(cfg)
    return str(e.value)


# --- datasets: ---------------------------------------------------------------------------------

def test_an_unknown_dataset_of_a_system_is_an_error_naming_it(project):
    cfg = _config(project)
    cfg["systems"]["peer"]["datasets"] = ["ds", "nope"]
    assert _error(cfg) == "config: systems.peer.datasets: 'nope' not among the datasets (ds, ds2)"


def test_a_system_runs_on_its_datasets_and_every_one_without_them(project):
    m = config.from_dict(_config(project))
    assert m.systems["peer"].datasets == ("ds",) and m.system_datasets("peer") == ["ds"]
    assert m.systems["builtin"].datasets == ("ds", "ds2") and m.system_datasets("builtin") == ["ds", "ds2"]
    # no part of a job's settings: narrowing a system's datasets re-runs none of its runs
    assert "datasets" not in Plan(m).job_conf("peer")


def planned(project: Path, cfg: dict, *targets: str) -> str:
    path = project / "config.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return snakemake(project, "--cores", "1", "-n", *(targets or ["all"]), "--configfile", str(path)).stdout


def jobs(out: str) -> dict[str, int]:
    return {m[1]: int(m[2]) for m in re.finditer(r"^(\w+)\s+(\d+)$", out, flags=re.M) if m[1] != "total"}


def test_a_system_absent_from_a_dataset_plans_no_run_there(project):
    out = planned(project, _config(project))
    assert "results/runs/ds/peer/baseline.json" in out
    assert "results/runs/ds2/peer/baseline.json" not in out and "results/cells/ds2/peer/" not in out
    assert "results/plots/arms/peer/ds2" not in out and "results/plots/arms/builtin/ds2" in out
    # three runs (builtin on both, peer on one), and a row-chart rule for each set of datasets
    counts = jobs(out)
    assert counts["evaluate_arm"] == 3 and counts["build_system_index"] == 1
    assert counts["plot_rows"] == 1 and counts["plot_rows_1"] == 1


# --- {model:NAME} -----------------------------------------------------------------------------

def test_an_unknown_model_placeholder_is_an_error_naming_the_key_and_the_models(project):
    cfg = _config(project)
    cfg["systems"]["peer"]["options"]["env"] = {"TOOL_MODEL": "{model:nope}"}
    assert _error(cfg) == ("config: systems.peer.options.env.TOOL_MODEL: {model:nope} names no model of the "
                           "config (known models: m, other)")


def test_a_model_placeholder_is_filled_with_the_path_and_json_is_left_alone():
    values = {"k": 3, **templates.model_values({"m": Path("results/models/m")})}
    assert templates.fill_argv(["{model:m}/model.onnx", '{"a": 1}', "{k}"], values) == [
        str(Path("results/models/m").resolve()) + "/model.onnx", '{"a": 1}', "3"]
    templates.check("search", ["{model:m}", "{k}"], {"k"})  # a model's name is checked with the config


def test_the_model_s_definition_and_contents_are_in_the_keys_and_its_paths_are_not(project):
    m = config.from_dict(_config(project))
    plan = Plan(m)
    cell = plan.cell("ds", "peer", "baseline")
    assert cell.inputs["system_models"] == ["results/models/m"]
    source = {"sha256": model_files_sha256(Path(m.models["m"].source))["sha256"]}
    model_key = {**m.models["m"].to_conf(), "source": source}
    assert cell.params["system_conf"]["models"] == {"m": model_key}
    assert plan.index_conf("peer")["models"] == {"m": model_key}
    assert m.models["m"].source not in json.dumps([cell.params, plan.index_conf("peer")])
    key = cell.inputs["index"].rsplit("/", 1)[1]
    assert plan.index_key("peer", "baseline", "fake") == key
    # another definition of the model is another index, though the argv is the same
    redefined = _config(project)
    redefined["models"]["m"]["format"] = "onnx"
    assert Plan(config.from_dict(redefined)).index_key("peer", "baseline", "fake") != key
    # where the export lies is in no job's settings (the jobs fill it in)
    assert "results/models" not in json.dumps([cell.params, plan.index_conf("peer")])
    # a system naming no model keeps the key it had before models could be named
    plain = _config(project)
    plain["systems"]["peer"]["options"]["index"] = INDEXED["index"]
    plain_plan = Plan(config.from_dict(plain))
    assert "models" not in plain_plan.index_conf("peer")
    assert "system_models" not in plain_plan.cell("ds", "peer", "baseline").inputs


def test_the_export_is_an_input_of_the_index_job_and_the_evaluation(project):
    out = planned(project, _config(project), "results/runs/ds/peer/baseline.json")
    assert jobs(out)["prepare_model"] == 1
    for rule in ("build_system_index", "evaluate_arm"):
        block = out[out.index(f"rule {rule}:"):]
        assert "results/models/m" in block[:block.index("output:")], block[:400]


@pytest.mark.slow
def test_the_index_command_reads_the_export_and_the_run_records_its_hash(project):
    cfg = _config(project)
    cfg["systems"] = {"peer": cfg["systems"]["peer"]}
    cfg["headline_method"] = "search"
    cfg["systems"]["peer"]["options"]["env"] = {"FAKE_MODEL": "{model:m}"}
    path = project / "config.yaml"
    path.write_text(yaml.safe_dump(cfg))
    snakemake(project, "--cores", "2", "results/runs/ds/peer/baseline.json", "--configfile", str(path))
    sha = json.loads((project / "results/models/m/model.json").read_text())["sha256"]
    run = json.loads((project / "results/runs/ds/peer/baseline.json").read_text())
    assert run["provenance"]["system_run"]["models"]["m"]["sha256"] == sha
    assert run["provenance"]["model"]["sha256"] == sha
    assert "results/models" not in json.dumps(run["provenance"]["system"])  # the template, never the path
    (index,) = (project / "results/index/fake/peer").iterdir()
    assert json.loads((index / "crmatrix-index.json").read_text())["models"]["m"]["sha256"] == sha
