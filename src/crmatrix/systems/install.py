"""Systems the DAG installs: a pinned pip requirement or a git commit, each in a virtual
environment of its own, so a peer's dependencies never meet ours or another peer's.

    systems:
      peer:   {type: mcp, install: {pip: "code-search-graph==0.8.1"}, options: {server: ["{bin}/..."]}}
      mine:   {type: command, install: {git: https://github.com/me/tool, commit: <40 hex>, subdirectory: py}}

The environment lives at `results/systems/{system}/{key}/venv`, the key hashing what was
installed (the requirement, or the commit and subdirectory), the Python version and the
contents of a constraints file — never where it came from (the git URL, a mirror bundle,
pip's index): a new version is a new key, a new mirror is none. A git commit is fetched
like a git corpus (`crmatrix.corpora.pins`, mirror bundles first); pip's own configuration
(pip.conf, PIP_INDEX_URL, PIP_FIND_LINKS) says where packages come from.

The environment is built in a staging directory and renamed into place, so a failed install
leaves nothing behind; its console scripts find the Python beside them, so it stays usable
after the rename (or a move of the whole results directory). `crmatrix-install.json` in it
records the install as the config wrote it (`repomap-cli==1.0.0`, where the key holds
`repomap-cli==1`) and what pip installed, for each run's provenance.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import MutableMapping
from pathlib import Path

from packaging.utils import canonicalize_name, canonicalize_version

from crmatrix import CrmatrixError, atomic
from crmatrix.config.entries import Install
from crmatrix.corpora import pins
from crmatrix.evaluation.provenance import INSTALL_INFO
from crmatrix.systems.processes import stop_group

log = logging.getLogger(__name__)

# Each install as its config writes it, {system: {git: url} or {pip: requirement}}: where a git
# install is fetched from and how a requirement is spelled change no result (the job's parameter is
# `spec`), like the mirror directories, so they reach the job by environment (see
# crmatrix.pipeline.locations), for the fetch and for the record.
SOURCES_VAR = "CRMATRIX_INSTALL_SOURCES"
TIMEOUT_S = 1800.0  # a venv and a dependency tree of a few hundred MB take about a minute here
PYTHON = f"{sys.version_info.major}.{sys.version_info.minor}"  # what a venv's compiled wheels depend on
# Host variables that would make pip or the new interpreter see our environment, not its own.
_FOREIGN = ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP")
# A console script names its interpreter by absolute path on its first line. This first line
# (distlib's launcher for long paths, made relative) runs the Python beside the script instead.
_LAUNCHER = b"#!/bin/sh\n'''exec' \"$(dirname -- \"$(realpath -- \"$0\")\")/python\" \"$0\" \"$@\"\n' '''\n"


def check(key: str, inst: Install) -> None:
    """An install is a pinned requirement (`pip`) or a commit (`git` + `commit`); errors name `key`."""
    kinds = [k for k in ("pip", "git") if getattr(inst, k) is not None]
    if len(kinds) != 1:
        raise CrmatrixError(f"{key}: needs exactly one of pip, git (found {kinds or 'none'})")
    if inst.pip is not None:
        pins.pinned_requirement(inst.pip, f"{key}.pip", extras=True)
        if inst.commit is not None or inst.subdirectory is not None:
            raise CrmatrixError(f"{key}: commit and subdirectory belong to a git install, not pip")
    else:
        if inst.commit is None:
            raise CrmatrixError(f"{key}: a git install needs 'commit' to pin it")
        pins.check_commit(f"{key}.commit", inst.commit)


def spec(inst: Install) -> dict:
    """What is installed, in one spelling: the normalized requirement, or the commit."""
    if inst.pip is not None:
        req, version = pins.pinned_requirement(inst.pip, "pip", extras=True)
        extras = f"[{','.join(sorted(req.extras))}]" if req.extras else ""
        return {"pip": f"{canonicalize_name(req.name)}{extras}=={canonicalize_version(version)}"}
    return {"commit": inst.commit, "subdirectory": inst.subdirectory}


def key(inst: Install, key_name: str = "install") -> str:
    """The environment's cache key: what is installed, the Python version, the constraints' contents."""
    constraints = None
    if inst.constraints:
        try:
            constraints = atomic.sha256_file(Path(inst.constraints))
        except OSError as e:
            raise CrmatrixError(f"{key_name}.constraints: cannot read {inst.constraints}: {e.strerror}") from None
    return atomic.hash_obj({**spec(inst), "python": PYTHON, "constraints": constraints})[:12]


def export_sources(installs: dict[str, Install], environ: MutableMapping[str, str] = os.environ) -> None:
    """Put each system's git URL or pip requirement, as written, into `environ` (for the install
    jobs); `installs`: system name -> its install."""
    environ[SOURCES_VAR] = json.dumps({name: {k: v for k, v in (("git", i.git), ("pip", i.pip)) if v is not None}
                                       for name, i in sorted(installs.items())})


def job_install(system: str, what: dict, constraints: str | None,
                environ: MutableMapping[str, str] = os.environ) -> Install:
    """The install an install job carries out: what it installs (`spec`'s, its parameter), the
    constraints file it was handed, and from the environment the URL of a git install or the
    requirement as the config writes it."""
    inst = Install.from_conf(what, f"systems.{system}.install")
    written = json.loads(environ.get(SOURCES_VAR) or "{}").get(system, {})
    if inst.commit is not None:
        inst = dataclasses.replace(inst, git=written["git"])
    else:
        inst = dataclasses.replace(inst, pip=written.get("pip", inst.pip))
    return dataclasses.replace(inst, constraints=constraints or None)


def venv_dir(system: str, inst: Install) -> str:
    """Where the workflow keeps the environment of `system` (whose `install` is `inst`)."""
    return f"results/systems/{system}/{key(inst, f'systems.{system}.install')}/venv"


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _FOREIGN}
    return {**env, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1", "PYTHONNOUSERSITE": "1"}


def _reason(output: str) -> str:
    """The line of pip's output that says why: its first `ERROR:` line (the cause; later ones
    are consequences), else the first `error:` of a failed build that is not pip's framing,
    else the last line."""
    lines = [ln.strip(" │║╰─>×") for ln in output.splitlines()]
    lines = [ln for ln in lines if ln]
    for prefix, generic in (("ERROR:", ()), ("error:", ("error: subprocess-exited-with-error",
                                                         "error: metadata-generation-failed"))):
        found = [ln for ln in lines if ln.startswith(prefix) and ln not in generic]
        if found:
            return found[0][:500]
    return lines[-1][:500] if lines else "(no output)"


def _run(argv: list[str], what: str, timeout_s: float) -> str:
    """Run one step of the install with its output in the job's log; a failure is one line."""
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            env=_env(), start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        stop_group(proc)  # pip's build backends run in its group
        raise CrmatrixError(f"{what}: did not finish within {timeout_s:g} s") from None
    except BaseException:
        stop_group(proc)
        raise
    text = out.decode("utf-8", "replace")
    log.info("%s:\n%s", " ".join(argv), text)
    if proc.returncode != 0:
        raise CrmatrixError(f"{what} failed (exit status {proc.returncode}): {_reason(text)}")
    return text


def _relocate(bin_dir: Path, stage: Path, final: Path) -> None:
    """Make the staged environment's scripts work from `final`: console scripts get the
    relative launcher (for pip's shebang line, or for its own launcher, which it writes when
    the path is long), and the activate scripts name the final directory."""
    python = f"{stage}/bin/".encode()
    for f in bin_dir.iterdir():
        if f.is_symlink() or not f.is_file():
            continue
        lines = f.read_bytes().split(b"\n")
        if lines[0].startswith(b"#!" + python):
            f.write_bytes(_LAUNCHER + b"\n".join(lines[1:]))
        elif lines[0] == b"#!/bin/sh" and len(lines) > 2 and lines[1].startswith(b"'''exec' ") and python in lines[1]:
            f.write_bytes(_LAUNCHER + b"\n".join(lines[3:]))
        elif f.name.startswith("activate"):
            f.write_bytes(b"\n".join(lines).replace(str(stage).encode(), str(final).encode()))


def _installed(report: Path) -> tuple[dict[str, str], dict[str, str], list[str]]:
    """From `pip install --report`: every package installed and the ones asked for (name ->
    version), and where the ones asked for were found."""
    items = json.loads(report.read_text(encoding="utf-8"))["install"]
    every = {canonicalize_name(i["metadata"]["name"]): i["metadata"]["version"] for i in items}
    asked = [i for i in items if i.get("requested")]
    return (dict(sorted(every.items())),
            {canonicalize_name(i["metadata"]["name"]): i["metadata"]["version"] for i in asked},
            [i.get("download_info", {}).get("url", "?") for i in asked])


def create(inst: Install, out: Path, *, name: str, mirrors: list[str], python: str = sys.executable,
           timeout_s: float = TIMEOUT_S) -> dict:
    """Install `inst` (a system's `install`) into a new virtual environment at `out`."""
    where = f"systems.{name}.install"
    out = Path(out).resolve()
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="crmatrix-install-") as scratch, atomic.staged_dir(out) as stage:
        scratch = Path(scratch)
        if inst.pip is not None:
            target, origin = spec(inst)["pip"], None
        else:
            try:
                origin = pins.fetch_git(inst.git, inst.commit, scratch / "src", mirrors)
            except CrmatrixError as e:
                raise CrmatrixError(f"{where}: {e}") from None
            target = str(scratch / "src" / (inst.subdirectory or ""))
        _run([python, "-m", "venv", str(stage)], f"{where}: python -m venv", timeout_s)
        argv = [str(stage / "bin" / "python"), "-m", "pip", "install", "--report", str(scratch / "report.json")]
        if inst.constraints:
            argv += ["--constraint", str(Path(inst.constraints).resolve())]
        _run([*argv, target], f"{where}: pip install {target if inst.pip is not None else inst.commit[:12]}",
             timeout_s)
        packages, requested, found = _installed(scratch / "report.json")
        origin = origin or {"source": ", ".join(found)}
        _relocate(stage / "bin", stage, out)
        written = {"pip": inst.pip} if inst.pip is not None else spec(inst)
        info = {"install": written, "key": key(inst, where), "python": PYTHON, "origin": origin,
                "version": ", ".join(f"{n}=={v}" for n, v in requested.items()), "requested": requested,
                "packages": packages, "seconds": round(time.perf_counter() - t0, 3)}
        atomic.write_json(stage / INSTALL_INFO, info)
    return info
