"""Systems the DAG installs (crmatrix.systems.install, rule install_system), end to end through
Snakemake, offline: the fake CLI of tests/fakes is a tiny project whose build backend needs
nothing, installed from a wheelhouse made here (pip with PIP_NO_INDEX and PIP_FIND_LINKS) or
from a git commit found in a mirror bundle."""

import importlib.util
import json
import os
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest
import yaml
from conftest import BIN, git, snakemake_cmd

from crmatrix import CrmatrixError, config
from crmatrix.config.entries import Install
from crmatrix.config.plan import Plan
from crmatrix.systems import install

FAKES = Path(__file__).parent / "fakes"
CORPUS = {
    "pkg/config.py": "def parse_config(text):\n    return dict(line.split('=') for line in text.splitlines())\n",
    "pkg/store.py": ("class Store:\n    def save_value(self, key, value):\n        self.data[key] = value\n\n"
                     "    def load_value(self, key):\n        return self.data[key]\n"),
}
DATASET = [
    {"query": "parse config", "expected_symbol": "parse_config", "expected_file_suffix": "pkg/config.py"},
    {"query": "save value", "expected_symbol": "save_value", "expected_file_suffix": "pkg/store.py"},
    {"query": "load value", "expected_symbol": "load_value", "expected_file_suffix": "pkg/store.py"},
]
FAKE = {
    "type": "command",
    "install": {"pip": "crmatrix-fake-tool==0.1"},
    "arms": ["baseline"],
    "options": {"index": ["{bin}/fake-search", "index", "{corpus}", "{index}"],
                "search": ["{bin}/fake-search", "search", "{index}", "{query}", "{k}"],
                "hits": "data.symbols[]", "fields": {"symbol": "name", "path": "file", "start_line": "line"}},
}


def fake_project(dest: Path, version: str) -> Path:
    """The installable fake (tests/fakes/tool + fake_search.py) at `version`."""
    dest.mkdir(parents=True)
    for f in (*(FAKES / "tool").iterdir(), FAKES / "fake_search.py"):
        if f.is_file():
            shutil.copy(f, dest / f.name)
    (dest / "VERSION").write_text(version + "\n")
    return dest


def build_wheel(project: Path, wheelhouse: Path) -> None:
    spec = importlib.util.spec_from_file_location(f"backend_{project.name}", project / "backend.py")
    backend = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(backend)
    wheelhouse.mkdir(exist_ok=True)
    backend.build_wheel(str(wheelhouse))


def offline_pip(wheelhouse: Path) -> dict:
    """pip finds packages in the wheelhouse alone (pip's own configuration: not part of any key)."""
    return {**os.environ, "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheelhouse)}


def smk(work: Path, *args: str, env: dict, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run([*snakemake_cmd(work), "--configfile", str(work / "config.yaml"), "--cores", "2", *args],
                          capture_output=True, text=True, timeout=600, env=env)
    if check and proc.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(args)} failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
    return proc


def planned(work: Path, env: dict) -> dict[str, int]:
    out = smk(work, "-n", "all", env=env).stdout
    return {k: v for k, v in Counter(re.findall(r"^(?:local)?rule (\w+):", out, flags=re.M)).items() if k != "all"}


@pytest.fixture(scope="module")
def wheelhouse(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("wheels")
    for version in ("0.1", "0.2"):
        build_wheel(fake_project(root / f"fake-{version}", version), root / "wheelhouse")
    return root / "wheelhouse"


@pytest.fixture
def work(tmp_path) -> Path:
    for rel, text in CORPUS.items():
        (tmp_path / "src" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "src" / rel).write_text(text)
    (tmp_path / "ds.json").write_text(json.dumps(DATASET))
    return tmp_path


def write_config(work: Path, fake: dict, **extra) -> dict:
    cfg = {"corpora": {"c": {"path": "src"}}, "datasets": {"d": {"file": "ds.json", "corpus": "c"}},
           "arms": {"baseline": {}, "knob": {"CODELENS_RANK_SPARSE_TERM_WEIGHT": "1"}},
           "systems": {"builtin": {"type": "builtin", "methods": ["lexical"]}, "fake": fake},
           "headline_method": "lexical", **extra}
    (work / "config.yaml").write_text(yaml.safe_dump(cfg))
    return cfg


@pytest.mark.slow
def test_an_installed_peer_runs_its_baseline_arm_from_its_own_environment(work, wheelhouse):
    cfg = write_config(work, FAKE, compare={"knob-as-default": {"release": "builtin", "candidate": "builtin@knob"}})
    env = offline_pip(wheelhouse)
    smk(work, "all", env=env)
    venv = work / install.venv_dir("fake", Install.from_conf(FAKE["install"]))
    assert (venv / "bin" / "fake-search").is_file()
    assert sorted(p.name for p in (work / "results/runs/d/fake").iterdir()) == ["baseline.json"]  # its one arm
    run = json.loads((work / "results/runs/d/fake/baseline.json").read_text())
    assert [q["rank"] for q in run["methods"]["search"]["queries"]] == [1, 1, 1]  # {bin}/fake-search answered
    prov = run["provenance"]
    assert prov["system_version"] == "crmatrix-fake-tool==0.1"
    assert prov["install"]["install"] == {"pip": "crmatrix-fake-tool==0.1"}
    assert prov["install"]["packages"] == {"crmatrix-fake-tool": "0.1"}
    assert "install" not in prov["system"] and "arms" not in prov["system"]  # the environment stands for it
    home, = (work / "results/home/fake").glob("corpus=c/index_key=*")  # its index's HOME, shared by its runs
    seen = json.loads((home / "last-env.json").read_text())
    assert seen["PATH"].split(os.pathsep)[0] == str(venv.resolve() / "bin")
    assert seen["VIRTUAL_ENV"] == str(venv.resolve())
    # `crmatrix run` plans the cell alike: the same environment, the same answers
    cli = subprocess.run([str(BIN / "crmatrix"), "run", "--corpus", "src", "--dataset", "ds.json", "--config",
                          "config.yaml", "--system", "fake", "--out", "cli.json"],
                         cwd=work, capture_output=True, text=True, timeout=300, env=env)
    assert cli.returncode == 0 and "installing" not in cli.stderr, cli.stderr
    again = json.loads((work / "cli.json").read_text())
    assert [q["rank"] for q in again["methods"]["search"]["queries"]] == [1, 1, 1]
    assert again["provenance"]["install"] == prov["install"]

    md = (work / "results/matrix/phase-matrix.md").read_text()
    assert "| d | fake | search | python | 3 | — | 1.000 [1.00, 1.00] | — |" in md  # no MDE, no knob cell for it
    assert "| python | fake | d | 1.000 | — |" in md  # roll-ups per system, never mixed
    gate = (work / "results/matrix/gate.txt").read_text()
    assert "knob-as-default: candidate builtin@knob against release builtin@baseline" in gate
    assert "  d: PASS lexical.mrr " in gate and "knob-as-default: PASS on all 1 datasets" in gate

    # where packages and commits are found is no part of any key: nothing to do
    elsewhere = {**env, "PIP_FIND_LINKS": str(work), "CRMATRIX_GIT_MIRRORS": str(work / "mirrors")}
    assert planned(work, elsewhere) == {}
    # a new version is a new environment, and the peer's index and run follow it
    cfg["systems"]["fake"] = {**FAKE, "install": {"pip": "crmatrix-fake-tool==0.2"}}
    (work / "config.yaml").write_text(yaml.safe_dump(cfg))
    # (and the charts that read the matrix: each system's row, builtin's under plot_rows and the
    # peer's, which runs the baseline arm alone, under a rule of its own; the heatmap; the latency
    # charts, which read every run; and the page of them all; not builtin's forest of knob, whose
    # cells are builtin's alone)
    assert planned(work, env) == {"install_system": 1, "build_system_index": 1, "evaluate_arm": 1, "cell_stats": 1,
                                  "collect_matrix": 1, "plot_rows": 1, "plot_rows_1": 1,
                                  "plot_heatmap": 1, "plot_latency": 1, "plot_gallery": 1,
                                  # the peer's baseline run: the systems compared
                                  "plot_leaderboard": 1, "plot_versus": 1, "plot_costs": 1}
    assert install.venv_dir("fake", Install(pip="crmatrix-fake-tool==0.2")) != str(venv.relative_to(work))


@pytest.mark.slow
def test_a_failed_install_leaves_no_environment_and_says_why_in_one_line(work, wheelhouse):
    write_config(work, {**FAKE, "install": {"pip": "crmatrix-fake-tool==9.9"}})
    proc = smk(work, "results/runs/d/fake/baseline.json", env=offline_pip(wheelhouse), check=False)
    assert proc.returncode != 0
    line = ("crmatrix: systems.fake.install: pip install crmatrix-fake-tool==9.9 failed (exit status 1): ERROR: "
            "Could not find a version that satisfies the requirement crmatrix-fake-tool==9.9 (from versions: 0.1, 0.2)")
    assert line in proc.stderr.splitlines()
    (log,) = (work / "logs/install_system/fake").iterdir()
    assert log.read_text().splitlines()[-1] == line
    assert not (work / "results/systems").exists() or not any((work / "results/systems").rglob("*"))


@pytest.mark.slow
def test_a_git_commit_installs_from_a_mirror_bundle_and_runs_where_it_lands(work, tmp_path):
    repo = fake_project(tmp_path / "tool", "0.3")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "tool")
    commit = git(repo, "rev-parse", "HEAD")
    (tmp_path / "mirror").mkdir()
    git(repo, "bundle", "create", str(tmp_path / "mirror" / f"acme+tool@{commit[:8]}.bundle"), "main")
    fake = {**FAKE, "install": {"git": "https://git.invalid/acme/tool", "commit": commit}}
    write_config(work, fake, git_mirrors=[str(tmp_path / "mirror")])
    venv = install.venv_dir("fake", Install.from_conf(fake["install"]))
    env = {**os.environ, "PIP_NO_INDEX": "1"}
    smk(work, venv, env=env)
    # the same commit at another URL is the same environment: nothing to do
    write_config(work, {**fake, "install": {**fake["install"], "git": "https://elsewhere.invalid/acme/tool"}},
                 git_mirrors=[str(tmp_path / "mirror")])
    assert "Nothing to be done" in smk(work, "-n", venv, env=env).stdout
    info = json.loads((work / venv / "crmatrix-install.json").read_text())
    assert info["install"] == {"commit": commit, "subdirectory": None}
    assert info["version"] == "crmatrix-fake-tool==0.3"
    assert info["origin"]["source"].endswith(f"acme+tool@{commit[:8]}.bundle")
    # staged, renamed, and moved once more: its console script finds the Python beside it
    moved = tmp_path / "moved"
    shutil.move(work / venv, moved)
    proc = subprocess.run([str(moved / "bin" / "fake-search"), "index", str(work / "src"), str(tmp_path / "ix")],
                          capture_output=True, text=True, timeout=60, env={"PATH": os.defpath, "HOME": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr
    assert json.loads((tmp_path / "ix" / "fake-index.json").read_text())["symbols"][0]["name"] == "parse_config"


def test_the_install_is_recorded_as_the_config_writes_it(wheelhouse, tmp_path, monkeypatch):
    """The job is handed the requirement in the key's spelling (`==0.1`); the record, read into
    every run's provenance, keeps the config's (`==0.1.0`)."""
    for var, value in offline_pip(wheelhouse).items():
        monkeypatch.setenv(var, value)
    m = config.from_dict({"corpora": {"c": {"path": "."}}, "datasets": {"d": {"file": "d.json", "corpus": "c"}},
                          "arms": {"baseline": {}}, "systems": {"fake": {**FAKE, "install": {
                              "pip": "crmatrix-fake-tool==0.1.0"}}}})
    environ: dict[str, str] = {}
    install.export_sources({s: c.spec.install for s, c in m.systems.items() if c.spec.install}, environ)
    what = install.spec(m.systems["fake"].spec.install)
    assert what == {"pip": "crmatrix-fake-tool==0.1"}  # the job's parameter: one spelling
    info = install.create(install.job_install("fake", what, None, environ), tmp_path / "venv", name="fake",
                          mirrors=[])
    assert info["install"] == {"pip": "crmatrix-fake-tool==0.1.0"}
    assert info["version"] == "crmatrix-fake-tool==0.1" and info["key"] == install.key(Install.from_conf(what))
    assert json.loads((tmp_path / "venv" / "crmatrix-install.json").read_text())["install"] == info["install"]


def test_the_install_key_holds_what_is_installed_not_where_it_came_from(tmp_path):
    def key(conf: dict) -> str:
        return install.key(Install.from_conf(conf))

    assert key({"pip": "crmatrix-fake-tool==0.1"}) != key({"pip": "crmatrix-fake-tool==0.2"})
    assert key({"pip": "Crmatrix_Fake.Tool==0.1.0"}) == key({"pip": "crmatrix-fake-tool==0.1"})  # one spelling
    sha = "a" * 40
    assert key({"git": "https://github.com/acme/tool", "commit": sha}) == key({"git": "/mirror/tool", "commit": sha})
    assert key({"git": "x", "commit": sha}) != key({"git": "x", "commit": "b" * 40})
    assert key({"git": "x", "commit": sha}) != key({"git": "x", "commit": sha, "subdirectory": "py"})
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "c.txt").write_text("numpy<3\n")
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    pinned = lambda d: key({"pip": "t==1", "constraints": str(tmp_path / d / "c.txt")})  # noqa: E731
    assert pinned("a") == pinned("b") != key({"pip": "t==1"})  # the file's contents, not its path
    (tmp_path / "b" / "c.txt").write_text("numpy<2\n")
    assert pinned("a") != pinned("b")
    # an installed system's index follows its environment's key, not the URL it came from
    m = config.from_dict({"corpora": {"c": {"path": "."}}, "datasets": {"d": {"file": "d.json", "corpus": "c"}},
                          "arms": {"baseline": {}},
                          "systems": {"fake": FAKE, "moved": {**FAKE, "install": {"pip": "crmatrix_fake_tool == 0.1"}},
                                      "bumped": {**FAKE, "install": {"pip": "crmatrix-fake-tool==0.2"}}}})
    index_key = lambda system: Plan(m).index_key(system, "baseline", "c")  # noqa: E731
    assert index_key("moved") == index_key("fake")
    assert index_key("bumped") != index_key("fake")


@pytest.mark.parametrize("system, message", [
    ({**FAKE, "install": {}}, "systems.fake.install: needs exactly one of pip, git (found none)"),
    ({**FAKE, "install": {"pip": "crmatrix-fake-tool>=0.1"}}, "systems.fake.install.pip 'crmatrix-fake-tool>=0.1': "
     "expected 'name==version' or 'name[extra]==version'"),
    ({**FAKE, "install": {"git": "x"}}, "systems.fake.install: a git install needs 'commit' to pin it"),
    ({**FAKE, "install": {"git": "x", "commit": "main"}}, "systems.fake.install.commit: expected a full 40-hex "
     "commit id, got 'main'"),
    ({key: v for key, v in FAKE.items() if key != "install"}, "systems.fake.options: uses {bin}, but the system "
     "installs nothing (expected install: {pip: NAME==VERSION} or {git: URL, commit: SHA})"),
    ({"type": "builtin", "install": {"pip": "x==1"}}, "systems.fake.install: only command and mcp systems run from "
     "an environment of their own (type builtin runs in crmatrix's)"),
    ({**FAKE, "arms": ["knob"]}, "systems.fake.arms: expected the baseline arm 'baseline' among them (every other "
     "arm is compared with it)"),
    ({**FAKE, "arms": ["baseline", "nope"]}, "systems.fake.arms: 'nope' not among the arms (baseline, knob)"),
])
def test_a_bad_install_or_arms_list_is_one_line_naming_the_key(system, message):
    with pytest.raises(CrmatrixError) as e:
        config.from_dict({"corpora": {"c": {"path": "."}}, "datasets": {"d": {"file": "d.json", "corpus": "c"}},
                          "arms": {"baseline": {}, "knob": {}}, "systems": {"fake": system}})
    assert str(e.value) == f"config: {message}"
