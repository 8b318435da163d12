import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
# The documentation: the README first (its commands make what the pages' commands use), then docs/.
DOC_PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BIN = Path(sys.executable).parent

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

needs_shared = pytest.mark.skipif(
    not (SHARED / "corpora").is_dir(),
    reason=f"{SHARED} is absent: the shared git bundles and benchmark data are test inputs, not part of the project",
)
# A test too long for `make test`, whose whole suite stays well under 30 minutes on 2 cores (31.5
# at stop 45, with these in): a real Slurm, whole-workflow variants of a behaviour a shorter test
# holds too. Run by hand with CRMATRIX_BY_HAND=1 (`CRMATRIX_BY_HAND=1 .venv/bin/pytest -m slow`).
by_hand = pytest.mark.skipif(os.environ.get("CRMATRIX_BY_HAND") != "1",
                             reason="too long for make test: run by hand with CRMATRIX_BY_HAND=1")


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
           "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"}
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env=env).stdout.strip()


def make_two_commit_repo(repo: Path) -> tuple[Path, str, str]:
    """A git repository at `repo` whose first commit has `pkg/core.py`; the second changes and adds
    files. Returns it with the two commits (the same hashes every time: the dates are fixed)."""
    (repo / "pkg").mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    (repo / "pkg" / "core.py").write_text(
        'def parse_config(text):\n    """Parse the settings text."""\n'
        '    return dict(line.split("=") for line in text.splitlines())\n\n\n'
        "class Store:\n    def save(self, key, value):\n        self.data[key] = value\n"
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "first")
    first = git(repo, "rev-parse", "HEAD")
    (repo / "pkg" / "core.py").write_text("def replaced():\n    pass\n")
    (repo / "pkg" / "later.py").write_text("def later():\n    pass\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "second")
    return repo, first, git(repo, "rev-parse", "HEAD")


@pytest.fixture
def two_commit_repo(tmp_path: Path) -> tuple[Path, str, str]:
    return make_two_commit_repo(tmp_path / "repo")


def tiny_project(tmp_path: Path, source: str = "def slugify(title):\n    return title.lower()\n",
                 **entries) -> tuple[Path, Path, Path]:
    """A directory of one Python file (`lib/util.py`, `source`), a dataset of one query for its
    `slugify`, and a config of both with the arms baseline and 2e (and `entries`, e.g. systems):
    (directory, dataset, config)."""
    import yaml

    src = tmp_path / "proj"
    (src / "lib").mkdir(parents=True)
    (src / "lib" / "util.py").write_text(source)
    ds = tmp_path / "ds.json"
    ds.write_text(json.dumps([{"query": "slugify", "expected_symbol": "slugify", "expected_file_suffix": "lib/util.py",
                               "query_type": "identifier"}]))
    cfg = tmp_path / "m.yaml"
    cfg.write_text(yaml.safe_dump({"corpora": {"x": {"path": str(src)}},
                                   "datasets": {"x": {"file": str(ds), "corpus": "x"}},
                                   "arms": {"baseline": {}, "2e": {"CODELENS_RANK_SPARSE_TERM_WEIGHT": "1"}},
                                   **entries}, sort_keys=False))
    return src, ds, cfg


def snakemake_cmd(workdir: Path, snakefile: Path = ROOT / "Snakefile") -> list[str]:
    return [str(BIN / "snakemake"), "--snakefile", str(snakefile), "--directory", str(workdir)]


def snakemake(workdir: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run([*snakemake_cmd(workdir), *args], capture_output=True, text=True, timeout=600)
    if check and proc.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}")
    return proc


@pytest.fixture
def copy_tree():
    def _copy(src: Path, dst: Path) -> Path:
        shutil.copytree(src, dst)
        return dst

    return _copy


def chart_spec(page: Path) -> dict:
    """The Vega-Lite spec a chart's HTML page (crmatrix.plots.style.page) draws."""
    text = page.read_text(encoding="utf-8")
    return json.loads(text[text.index('vegaEmbed("#vis", ') + 18:text.rindex(', {"mode": "vega-lite"})')])


def chart_data(spec: dict) -> list[dict]:
    """A chart's table: the largest of its inline data sets (a layer may draw a filtered copy)."""
    return max(spec["datasets"].values(), key=len)
