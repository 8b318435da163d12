"""The plugin example of docs/systems.md, as printed: its module is installed through the
entry point its pyproject lines declare (a dist-info on PYTHONPATH, which importlib.metadata
reads as an installed package's; nothing goes into the project's environment), and the
workflow runs one cell with it: Snakemake's planning resolves the type through the registry,
the cell's job loads it again in its own process and scores its searches."""

import json
import os
import re
import subprocess
import tomllib
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, snakemake_cmd
from test_systems import CORPUS, DATASET

PAGE = ROOT / "docs" / "systems.md"


def plugin_section() -> str:
    text = PAGE.read_text()
    return text[text.index("## A Python plugin\n"):].split("\n## ", 1)[0].split("\n### ", 1)[0]


def block(section: str, lang: str) -> str:
    """The section's one fenced block of `lang`, verbatim."""
    found = re.findall(rf"^```{lang}\n(.*?)^```$", section, flags=re.M | re.S)
    assert len(found) == 1, f"docs/systems.md, A Python plugin: expected one ```{lang} block, found {len(found)}"
    return found[0]


def install(site: Path, pyproject: str, module_source: str) -> str:
    """The example's package in `site` as pip would leave it (its module, a dist-info with the
    entry points of `pyproject`); returns the entry point's name."""
    group = tomllib.loads(pyproject)["project"]["entry-points"]["crmatrix.systems"]
    assert len(group) == 1, group
    (name, target), = group.items()
    module = target.split(":")[0]
    path = site.joinpath(*module.split(".")).with_suffix(".py")
    path.parent.mkdir(parents=True)
    for parent in path.relative_to(site).parents:
        if parent != Path("."):
            (site / parent / "__init__.py").touch()
    path.write_text(module_source)
    dist = site / "mysearch-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: mysearch\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(f"[crmatrix.systems]\n{name} = {target}\n")
    return name


def test_the_plugin_example_loads_through_its_entry_point_and_runs_a_cell(tmp_path):
    section = plugin_section()
    type_name = install(tmp_path / "site", block(section, "toml"), block(section, "python"))
    # the config line the page gives, with the type its entry point names
    assert f"`systems: {{mine: {{type: {type_name}, options: {{...}}}}}}`" in section
    for rel, text in CORPUS.items():
        (tmp_path / "corpus" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "corpus" / rel).write_text(text)
    (tmp_path / "ds.json").write_text(json.dumps(DATASET))
    (tmp_path / "config.yaml").write_text(yaml.safe_dump({
        "corpora": {"c": {"path": "corpus"}}, "datasets": {"ds": {"file": "ds.json", "corpus": "c"}},
        "arms": {"baseline": {}}, "systems": {"mine": {"type": type_name, "options": {}}}}))
    # the plugin's package first; this checkout's crmatrix before whatever the venv installed
    path = os.pathsep.join([str(tmp_path / "site"), str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])
    proc = subprocess.run([*snakemake_cmd(tmp_path), "--cores", "2", "results/runs/ds/mine/baseline.json",
                           "--configfile", str(tmp_path / "config.yaml")],
                          capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": path})
    assert proc.returncode == 0, proc.stderr[-3000:]
    run = json.loads((tmp_path / "results/runs/ds/mine/baseline.json").read_text())
    assert list(run["methods"]) == ["names"]
    queries = run["methods"]["names"]["queries"]
    assert [(q["rank"], q["failure"]) for q in queries] == [(1, None)] * 4
    # "save value": both words in save_value's name, one in load_value's, no other name's (the
    # TREC file's score column is the rank's reverse)
    assert (tmp_path / "results/trec/ds/mine/baseline/names.run").read_text().splitlines() == [
        "q000 Q0 pkg/config.py:1:parse_config 1 1 mine.baseline.names",
        "q001 Q0 pkg/store.py:2:save_value 1 2 mine.baseline.names",
        "q001 Q0 pkg/store.py:5:load_value 2 1 mine.baseline.names",
        "q002 Q0 pkg/store.py:5:load_value 1 2 mine.baseline.names",
        "q002 Q0 pkg/store.py:2:save_value 2 1 mine.baseline.names",
        "q003 Q0 pkg/store.py:8:delete_key 1 1 mine.baseline.names"]


def test_the_registry_refuses_a_plugin_that_is_not_a_system():
    """Why the example subclasses System: the same entry, a plain class, is refused by name."""
    from crmatrix import CrmatrixError
    from crmatrix.systems import registry

    class Plain:
        METHODS = ("names",)

    with pytest.raises(CrmatrixError, match=r"^system type mysearch: .*Plain.* is not a subclass of "
                                            r"crmatrix\.systems\.registry\.System$"):
        registry.TYPES.register("mysearch")(Plain)
    assert "mysearch" not in registry.TYPES.own
