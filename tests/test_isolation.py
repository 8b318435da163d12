"""An external system works on a read-only mirror of its corpus, outside the project: it
neither finds the project's checkout above its corpus nor changes the shared tree, and a write
that forces its way stops the job in one line (crmatrix.systems.isolation)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from crmatrix import CrmatrixError, config
from crmatrix.evaluation.cell import CellJob
from crmatrix.stages import build_system_index, evaluate_arm, extract_symbols, fetch_corpus, prepare_dataset
from crmatrix.systems import isolation

FAKE_CLI = [sys.executable, str(Path(__file__).parent / "fakes" / "fake_search.py")]
CORPUS = {
    "pkg/config.py": "def parse_config(text):\n    return dict(line.split('=') for line in text.splitlines())\n",
    "pkg/store.py": "class Store:\n    def save_value(self, key, value):\n        self.data[key] = value\n",
}
DATASET = [
    {"query": "parse config", "expected_symbol": "parse_config", "expected_file_suffix": "pkg/config.py",
     "query_type": "short_phrase"},
    {"query": "save value", "expected_symbol": "save_value", "expected_file_suffix": "pkg/store.py",
     "query_type": "short_phrase"},
]
OPTIONS = {"index": [*FAKE_CLI, "index", "{corpus}", "{index}"],
           "search": [*FAKE_CLI, "search", "{index}", "{query}", "{k}"], "env": {"FAKE_CORPUS": "{corpus}"},
           "hits": "data.symbols[]", "fields": {"symbol": "name", "path": "file", "start_line": "line"}}
TREE = "results/corpora/c/tree"


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A project checkout (git, pyproject.toml) holding a corpus under results/, as the workflow
    leaves it; the working directory, with the mirrors in a scratch directory outside it."""
    root = tmp_path / "project"
    src = tmp_path / "src"
    for rel, text in CORPUS.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text)
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "pyproject.toml").write_text("[project]\nname = 'crmatrix-like'\n")
    (root / "ds.json").write_text(json.dumps(DATASET))
    c = root / "results/corpora/c"
    fetch_corpus.run("c", {"path": str(src), "include": ["**"], "exclude": []}, c / "tree", c / "manifest.json",
                     [], {})
    extract_symbols.run(c / "tree", c / "manifest.json", c / "symbols.jsonl")
    prepare_dataset.run(root / "ds.json", "codelens", "c", c / "manifest.json", c / "symbols.jsonl",
                        c / "tasks.jsonl")
    monkeypatch.chdir(root)
    monkeypatch.setenv(isolation.SCRATCH_ENV, str(tmp_path / "scratch"))
    return root


MCP = {"server": [sys.executable, str(Path(__file__).parent / "fakes" / "fake_mcp_server.py"), "{corpus}"],
       "tool": "search", "args": {"query": "{query}", "k": "{k}"},
       "hits": "data.symbols[]", "fields": {"symbol": "name", "path": "file", "start_line": "line"}}


def conf(type_: str = "command", options: dict = OPTIONS) -> dict:
    return config.from_dict({"corpora": {"c": {"path": "."}}, "datasets": {"d": {"file": "d.json", "corpus": "c"}},
                             "arms": {"baseline": {}},
                             "systems": {"fake": {"type": type_, "options": options}}}).systems["fake"].conf


def index(project: Path, env: dict | None = None) -> Path:
    out = project / "results/indexes/fake"
    build_system_index.run(system="fake", system_conf=conf(), tree=project / TREE, env=env or {}, out=out,
                           home_dir=project / "results/home/fake/index")
    return out


def evaluate(project: Path, index_dir: Path | None, env: dict | None = None, system_conf: dict | None = None) -> dict:
    c = project / "results/corpora/c"
    inputs = {"tasks": c / "tasks.jsonl", "symbols": c / "symbols.jsonl", "manifest": c / "manifest.json",
              "tree": project / TREE, "dataset_file": project / "ds.json",
              **({"index": index_dir} if index_dir else {})}
    params = {"system_conf": system_conf or conf(), "env": env or {}, "top_k": 10,
              "split": {"split": "all", "seed": None},
              "home_dir": project / "results/home/fake/index"}
    cell = CellJob("ds", "fake", "a", inputs, params, {"run": project / "results/runs/run.json"})
    return evaluate_arm.run(cell).to_json()


def test_a_tool_sees_a_mirror_with_no_project_above_it_and_its_answers_still_score(project):
    shared = isolation.fingerprint(project / TREE)
    run = evaluate(project, index(project), env={"FAKE_WALK_UP": "1", "FAKE_ABSOLUTE": "1"})
    home = project / "results/home/fake/index"
    seen = json.loads((home / "walked-up.json").read_text())
    # above its corpus it finds no project, and git finds none from its corpus or its HOME
    assert seen["projects"] == [str(project)]  # its HOME (the working directory) lies in results/
    assert seen["git_from_corpus"] is None and seen["git_from_cwd"] is None
    corpus = Path(json.loads((home / "last-env.json").read_text())["FAKE_CORPUS"])
    assert corpus == isolation.mirror_path(project / TREE, "fake") and not corpus.is_relative_to(project)
    assert [str(d) for d in corpus.parents if (d / ".git").exists() or (d / "pyproject.toml").exists()] == []
    # its absolute paths under the mirror name the corpus's files
    assert [q["rank"] for q in run["methods"]["search"]["queries"]] == [1, 1]
    assert run["methods"]["search"]["queries"][0]["top_candidate"]["path"] == "pkg/config.py"
    assert isolation.fingerprint(project / TREE) == shared
    # no copy: the mirror's file is the shared file, read-only under both names
    mirrored, original = (corpus / "pkg/config.py").stat(), (project / TREE / "pkg/config.py").stat()
    assert mirrored.st_ino == original.st_ino and original.st_nlink == 2 and original.st_mode & 0o222 == 0


def test_an_index_command_writing_into_its_corpus_stops_in_one_line_naming_it_and_the_file(project):
    mirror = isolation.mirror_path(project / TREE, "fake")
    shared = isolation.fingerprint(project / TREE)
    with pytest.raises(CrmatrixError) as e:
        index(project, env={"FAKE_WRITE_CORPUS": ".code-intel/index.db"})
    assert str(e.value) == (f"command system 'fake': its index command wrote into its corpus, the mirror {mirror} "
                            f"of {TREE}: .code-intel/index.db (added) (a tool must keep its files in its {{home}} "
                            "or {index})")
    assert isolation.fingerprint(project / TREE) == shared  # the shared tree never saw it
    assert not (project / "results/indexes/fake").exists()
    assert not mirror.exists()  # discarded: the next job gets a clean one
    index(project)  # and a tool that behaves runs on it
    assert sorted(p.name for p in mirror.iterdir()) == ["pkg"]


def test_a_query_changing_a_shared_file_stops_the_evaluation_naming_the_system_and_the_file(project):
    built = index(project)
    with pytest.raises(CrmatrixError) as e:  # forced: made writable first (as root need not)
        evaluate(project, built, env={"FAKE_WRITE_CORPUS": "pkg/config.py", "FAKE_FORCE_WRITE": "1"})
    assert str(e.value) == (f"command system 'fake' on dataset 'ds', arm 'a': wrote into the shared corpus tree "
                            f"{TREE}: pkg/config.py (changed) (a tool must keep its files in its {{home}} or "
                            f"{{index}}); delete {TREE} to have it made again")
    assert not (project / "results/runs/run.json").exists()


def test_an_mcp_server_keeping_its_index_in_the_tree_it_serves_stops_its_evaluation(project):
    shared = isolation.fingerprint(project / TREE)
    mirror = isolation.mirror_path(project / TREE, "fake")
    with pytest.raises(CrmatrixError) as e:
        evaluate(project, None, env={"FAKE_WRITE_CORPUS": ".code-intel/index.db"}, system_conf=conf("mcp", MCP))
    assert str(e.value) == (f"mcp system 'fake' on dataset 'ds', arm 'a': wrote into its corpus, the mirror {mirror} "
                            f"of {TREE}: .code-intel/index.db (added) (a tool must keep its files in its {{home}} "
                            "or {index})")
    assert isolation.fingerprint(project / TREE) == shared and not mirror.exists()
    run = evaluate(project, None, system_conf=conf("mcp", MCP))  # a clean mirror: the next run sees none of it
    assert [q["rank"] for q in run["methods"]["search"]["queries"]] == [1, 1]


def test_a_scratch_directory_inside_a_checkout_is_refused(project, monkeypatch):
    monkeypatch.setenv(isolation.SCRATCH_ENV, str(project / "scratch"))
    with pytest.raises(CrmatrixError, match=rf"^CRMATRIX_SCRATCH={project}/scratch: lies inside the git checkout "
                                            rf"{project}, which a tool walking up from its corpus would find"):
        index(project)


def test_a_fingerprint_names_the_first_file_added_changed_or_removed(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "a.py").write_text("a\n")
    before = isolation.fingerprint(tmp_path)
    assert isolation.difference(before, isolation.fingerprint(tmp_path)) is None
    (tmp_path / "d" / "a.py").write_text("changed\n")
    assert isolation.difference(before, isolation.fingerprint(tmp_path)) == "d/a.py (changed)"
    (tmp_path / "e").mkdir()
    (tmp_path / "e" / "b.py").write_text("b\n")
    os.remove(tmp_path / "d" / "a.py")
    after = isolation.fingerprint(tmp_path)
    assert isolation.difference(before, after) == "d/a.py (removed)"  # files first, then by path
    assert isolation.difference(after, before) == "d/a.py (added)"


def test_a_mirror_whose_tree_is_gone_is_removed_when_the_system_next_mirrors_one(tmp_path, monkeypatch):
    monkeypatch.setenv(isolation.SCRATCH_ENV, str(tmp_path / "scratch"))
    trees = [tmp_path / name / "tree" for name in ("a", "b")]
    for tree in trees:
        (tree / "pkg").mkdir(parents=True)
        (tree / "pkg" / "m.py").write_text("x = 1\n")
    gone = isolation.Mirror(trees[0], "s").path
    assert (gone / "pkg" / "m.py").read_text() == "x = 1\n"
    shutil.rmtree(trees[0])  # a corpus deleted
    kept = isolation.Mirror(trees[1], "s").path
    assert not gone.exists() and (kept / "pkg" / "m.py").exists()
