"""One description of the paths (crmatrix.config.paths): the rules' outputs and the plan's files
are the same table's templates, and nothing else spells a results file."""

import ast
import json
import re
import subprocess
import sys

import pytest
import yaml
from conftest import ROOT, tiny_project

from crmatrix import config
from crmatrix.config import paths
from crmatrix.config.plan import Plan

# The rules of a loaded workflow, each with its output and log templates, printed as JSON (the
# workflow planned for `all` in the given directory; Snakemake is the tests' to import).
RULES = r"""
import json, sys
from snakemake.cli import main
from snakemake import workflow as smk_workflow
from snakemake.io import strip_wildcard_constraints
seen = {}
build = smk_workflow.Workflow._build_dag
def caught(self):
    build(self)
    seen["rules"] = {r.name: {"output": [strip_wildcard_constraints(str(f)) for f in r.output],
                              "log": [str(f) for f in r.log]}
                     for r in self.rules}
smk_workflow.Workflow._build_dag = caught
try:
    main(["-n", "--quiet", "all", "--cores", "1", "--snakefile", sys.argv[1], "--directory", sys.argv[2],
          "--configfile", sys.argv[3]])
except SystemExit as e:
    assert not e.code, e.code
print(json.dumps(seen["rules"]))
"""


def template_regex(template: str) -> re.Pattern:
    """A template with each field matching any text (a rule's own wildcard included)."""
    parts = re.split(r"(\{[a-z_]+\})", template)
    return re.compile("".join(".+" if re.fullmatch(r"\{[a-z_]+\}", p) else re.escape(p) for p in parts))


TABLE = {kind: template_regex(paths.Layout().pattern(kind)) for kind in paths.TEMPLATES}


def tiny_config(tmp_path):
    return tiny_project(tmp_path, systems={"builtin": {"type": "builtin", "methods": ["lexical"]}})[2]


def test_a_layout_formats_its_templates_and_refuses_a_field_it_lacks():
    at = paths.Layout("out")
    assert at.file("run", dataset="d", system="s", arm="a") == "out/runs/d/s/a.json"
    assert at.pattern("run", arm="a") == "out/runs/{dataset}/{system}/a.json"
    assert paths.Layout().pattern("index") == "results/index/{corpus}/{system}/{index_key}"
    with pytest.raises(KeyError, match="run: no value for arm"):
        at.file("run", dataset="d", system="s")
    with pytest.raises(KeyError, match=r"run: no field corpus \(its fields: arm, dataset, system\)"):
        at.pattern("run", corpus="c")
    with pytest.raises(KeyError, match="no kind of file 'runs'"):
        at.file("runs")


def test_every_output_of_every_rule_is_a_template_of_the_table(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    out = subprocess.run([sys.executable, "-c", RULES, str(ROOT / "Snakefile"), str(work), str(tiny_config(tmp_path))],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    rules = json.loads(out.stdout.strip().splitlines()[-1])
    assert {"evaluate_arm", "cell_stats", "build_repository_index", "collect_slice_matrix", "plot_gallery"} <= {*rules}
    untabled = [(name, f) for name, r in rules.items() for f in r["output"]
                if not any(rx.fullmatch(f) for rx in TABLE.values())]
    assert untabled == []
    assert rules["evaluate_arm"]["output"] == [paths.Layout().pattern(k) for k in ("run", "trec", "tracking")]
    # a job's log is its rule's own, never among the results
    assert all(f.startswith("logs/") for r in rules.values() for f in r["log"])


# The kinds of file of `results/` as a path spells them (a string or the literal parts of an f-string).
RESULTS_DIRS = re.compile(r"(^|/)(results|runs|cells|corpora|symbols|graph|repos|models|systems|index|tree-index|"
                          r"home|datasets|trec|tokenbench|audit|queries|tracking|callgraph|matrix|plots)/")
SMK_RESULTS = re.compile(r"""["']results/""")


def test_no_rule_nor_the_plan_spells_a_results_file_itself():
    smk = [f"{p.name}:{n}" for p in sorted((ROOT / "workflow" / "rules").glob("*.smk"))
           for n, line in enumerate(p.read_text().splitlines(), 1)
           if SMK_RESULTS.search(line.split("#", 1)[0])]
    assert smk == []
    spelled = []
    for rel in ("config/plan.py", "config/targets.py", "config/resolve.py", "pipeline/slices.py"):
        tree = ast.parse((ROOT / "src" / "crmatrix" / rel).read_text())
        docs = {id(n.body[0].value) for n in ast.walk(tree)
                if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef)) and isinstance(n.body[0], ast.Expr)}
        spelled += [f"{rel}:{n.lineno}: {n.value!r}" for n in ast.walk(tree)
                    if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs
                    and RESULTS_DIRS.search(n.value)]
    assert spelled == []


def test_the_plan_formats_the_table(monkeypatch):
    """Move the runs and the cells elsewhere in the table: every file the plan names follows."""
    monkeypatch.setitem(paths.TEMPLATES, "run", "{root}/elsewhere/{system}/{dataset}/{arm}.run.json")
    monkeypatch.setitem(paths.TEMPLATES, "cell", "{root}/cells-moved/{arm}/{dataset}/{system}.json")
    matrix = config.from_dict(yaml.safe_load(tiny_config_text()), "tiny")
    plan = Plan(matrix, root="R")
    assert plan.cell("x", "builtin", "2e").outputs["run"] == "R/elsewhere/builtin/x/2e.run.json"
    assert plan.run_files() == ["R/elsewhere/builtin/x/baseline.run.json", "R/elsewhere/builtin/x/2e.run.json"]
    assert plan.cell_inputs("x", "builtin", "2e") == {"run": "R/elsewhere/builtin/x/2e.run.json",
                                                      "base": "R/elsewhere/builtin/x/baseline.run.json"}
    assert plan.system_cells("builtin", ["2e"]) == ["R/cells-moved/baseline/x/builtin.json",
                                                    "R/cells-moved/2e/x/builtin.json"]
    assert plan.cell("x", "builtin", "2e").inputs["tasks"] == "R/datasets/x.jsonl"


def tiny_config_text() -> str:
    return yaml.safe_dump({"corpora": {"x": {"path": str(ROOT / "src")}},
                           "datasets": {"x": {"file": str(ROOT / "datasets" / "self.json"), "corpus": "x"}},
                           "arms": {"baseline": {}, "2e": {"CODELENS_RANK_SPARSE_TERM_WEIGHT": "1"}},
                           "systems": {"builtin": {"type": "builtin", "methods": ["lexical"]}}}, sort_keys=False)
