"""The workflow run for one command (`crmatrix run`, `crmatrix try`): a config of one cell written
into a temporary work directory, and the project's Snakemake asked for the files the command
needs, so the command's files are made by the same rules, from the same path table, as the
matrix's. Snakemake runs as a process of this interpreter: the library never imports it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from crmatrix import CrmatrixError

SNAKEFILE = Path(__file__).resolve().parents[3] / "Snakefile"
CONFIG = "crmatrix-one-cell.yaml"
# What the workflow writes in its working directory: the work directory's own.
OWN = ("results", "logs", ".snakemake")
# Where the workflow keeps systems' environments (rule install_system), under results/: the
# caller's, as a matrix run there would have them (made once, not in each temporary directory).
ENVIRONMENTS = Path("results") / "systems"
# A failed job as Snakemake reports it: its rule, then (among its fields) its log.
FAILED_LOG = re.compile(r"^Error in rule .*?^\s*log: (\S+)", re.M | re.S)


def prepare(work: Path, caller: Path, environments: bool) -> None:
    """`work` made a work directory that sees the caller's files: each entry of the caller's
    directory is linked there, so the config's relative paths name what they name for the caller,
    but for what the workflow writes (results/, logs/, .snakemake/), which is the run's own; with
    `environments`, results/systems is the caller's (made there if missing)."""
    for entry in sorted(caller.iterdir()):
        if entry.name not in OWN:
            (work / entry.name).symlink_to(entry)
    if environments:
        (caller / ENVIRONMENTS).mkdir(parents=True, exist_ok=True)
        (work / ENVIRONMENTS).parent.mkdir(parents=True, exist_ok=True)
        (work / ENVIRONMENTS).symlink_to((caller / ENVIRONMENTS).resolve())


def make(raw: dict, targets: list[str], work: Path) -> None:
    """Snakemake asked for `targets` (paths under `work`) under the config `raw` (its git mirrors
    by their absolute paths: they are the caller's; so must its cache_dir be), on every core of
    the machine; a failure is raised as the failed job's one-line error."""
    if not SNAKEFILE.is_file():
        raise CrmatrixError(f"the workflow's Snakefile is not at {SNAKEFILE}: this command runs the project's "
                            "workflow, from a checkout of crmatrix installed with `pip install -e`")
    config = work / CONFIG
    raw = {**raw, "git_mirrors": [str(Path(m).resolve()) for m in raw.get("git_mirrors") or []]}
    config.write_text(json.dumps(raw, indent=1, ensure_ascii=False))  # (YAML: the Snakefile reads it so)
    # --configfile last: it takes every value after it, targets included
    argv = [sys.executable, "-m", "snakemake", *targets, "--snakefile", str(SNAKEFILE), "--directory", str(work),
            "--cores", "all", "--configfile", str(config)]
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=os.environ.copy())
    if proc.returncode != 0:
        raise CrmatrixError(failure(proc.stdout, work, proc.returncode))


def failure(output: str, work: Path, code: int) -> str:
    """The one line that says why the workflow stopped: the failed job's error (the last line of
    its log: `crmatrix: ...` for a user error, a traceback's last line for a fault), else the
    workflow's own (`crmatrix: ...` while it plans), else Snakemake's last line."""
    for log in FAILED_LOG.findall(output):
        path = work / log
        text = path.read_text(errors="replace") if path.is_file() else ""
        lines = [line for line in text.splitlines() if line.strip()]
        if lines:
            return lines[-1].removeprefix("crmatrix: ")
    ours = [line for line in output.splitlines() if line.startswith("crmatrix: ")
            and not line.startswith("crmatrix: warning:")]
    if ours:
        return ours[-1].removeprefix("crmatrix: ")
    last = next((line.strip() for line in reversed(output.splitlines()) if line.strip()), "no output")
    return f"the workflow stopped (snakemake exit {code}): {last}"
