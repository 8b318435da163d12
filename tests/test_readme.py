"""Every `make`, `snakemake` and `crmatrix` command line of the README and of docs/, run as
printed in a copy of the project (Snakemake as a dry run where the real thing would be slow)."""

import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import BIN, DOC_PAGES, ROOT, SHARED

VENV = BIN.parent
PROGRAMS = ("make", ".venv/bin/snakemake", ".venv/bin/crmatrix")


def code_lines(text: str) -> list[str]:
    """The lines of a page's code blocks: fenced, or indented by four spaces (also in a list item)."""
    out, fenced = [], False
    for line in text.splitlines():
        if line.strip().startswith("```"):
            fenced = not fenced
        elif fenced or line.startswith("    "):
            out.append(line)
    return out


def page_commands(page: Path) -> list[str]:
    """Command lines in a page's code blocks, continuations joined."""
    out, cont = [], ""
    for line in code_lines(page.read_text()):
        text = line.strip()
        if cont:
            text = cont + " " + text
            cont = ""
        if text.endswith("\\"):
            cont = text[:-1].rstrip()
            continue
        text = re.sub(r"\s+#\s.*$", "", text)  # a trailing comment
        if text.split(" ", 1)[0] in PROGRAMS:
            out.append(text)
    return out


def doc_commands() -> list[str]:
    """Every page's commands in page order, each once: they run in one copy of the project,
    so a page's command may use what an earlier one made (the README's `run.json`)."""
    return list(dict.fromkeys(c for page in DOC_PAGES for c in page_commands(page)))


def test_the_docs_have_commands_to_check():
    readme = page_commands(ROOT / "README.md")
    assert "make run" in readme and "make test" in readme
    cmds = doc_commands()
    assert "make resume" in cmds and "make lint" in cmds
    assert any(c.startswith(".venv/bin/crmatrix check") for c in cmds)
    assert any(c.startswith(".venv/bin/crmatrix promote") for c in cmds)
    assert not [c for c in cmds if re.search(r"--configfile \S+ (all|results/)", c)], "target after --configfile"


def test_every_direct_snakemake_with_a_configfile_is_preceded_by_crmatrix_validate():
    """Snakemake reads a `--configfile` before the Snakefile runs: one it cannot read (empty, a
    YAML error, a tab, a list at the top level) stops it with a WorkflowError naming neither file
    nor line. So wherever the docs print the direct command, `crmatrix validate FILE` (which
    names both) comes right before it, as `make run CONFIG=FILE` runs it first."""
    direct = 0
    for page in DOC_PAGES:
        cmds = page_commands(page)
        for i, cmd in enumerate(cmds):
            config = re.search(r"--configfile (\S+)", cmd)
            if cmd.startswith(".venv/bin/snakemake") and config:
                direct += 1
                assert i > 0 and cmds[i - 1] == f".venv/bin/crmatrix validate {config.group(1)}", (page.name, cmd)
    assert direct >= 3  # the seed, the seed matrix, SWE-QA


def as_run(cmd: str) -> list[str] | None:
    """The argv that checks `cmd` here: None for `make test` (it is this suite)."""
    argv = shlex.split(cmd)
    if argv[0] == "make":
        if argv[1] == "test":
            return None
        fixed = ["make", "-o", f"{VENV}/.installed", f"VENV={VENV}", "CORES=2"]
        if argv[1] in ("run", "resume"):
            return [*fixed, *argv[1:], "SNAKEFLAGS=-n"]
        if argv[1] in ("report", "bench"):  # need a finished run / ../shared: show what they would do
            return [*fixed, "-n", *argv[1:]]
        return [*fixed, *argv[1:]]
    argv[0] = str(BIN / Path(argv[0]).name)
    if argv[0].endswith("snakemake"):
        targets = [a for a in argv[1:] if not a.startswith("-") and "/" in a and not a.startswith("profiles/")]
        if not (targets and all(t.startswith("results/corpora/self/") for t in targets)):
            argv.append("-n")  # a fetch of this repository at its pin is quick: that one runs for real
    return argv


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    """The project's files as they are now, with its git history (the `self` corpus is a commit of it)."""
    work = tmp_path_factory.mktemp("readme") / "project"
    # a clone carries the history (also from a git worktree, whose .git is a file); the
    # working files are then laid over it as they are now, edits included
    subprocess.run(["git", "clone", "-q", "--no-checkout", str(ROOT), str(work)], check=True, timeout=120)
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    for rel in filter(None, files.split("\0")):
        if (ROOT / rel).is_file() or (ROOT / rel).is_symlink():
            (work / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, work / rel, follow_symlinks=False)
    if SHARED.is_dir():  # beside the project, as for a user: configs name ../shared's data and bundles
        (work.parent / "shared").symlink_to(SHARED)
    return work


def needs_shared(cmd: str) -> bool:
    """Whether the command's config reads ../shared (its benchmark data or git bundles)."""
    config = re.search(r"(?:--configfile |CONFIG=)(\S+)", cmd)
    return bool(config) and "../shared" in (ROOT / config.group(1)).read_text()


@pytest.mark.slow
@pytest.mark.parametrize("cmd", doc_commands())
def test_doc_command_works_as_printed(workspace, cmd):
    argv = as_run(cmd)
    if argv is None:
        pytest.skip("`make test` is the suite running this test")
    if needs_shared(cmd) and not SHARED.is_dir():
        pytest.skip(f"{SHARED} is absent: the config reads its data")
    # not under `make test`
    env = {k: v for k, v in os.environ.items() if k not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS")}
    proc = subprocess.run(argv, cwd=workspace, capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, f"{cmd}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
