"""What the benchmarks share to run and time Snakemake: a copy of the project to run it in
(`workspace`), one timed run (`snakemake`), its jobs per rule, timers taking turns (`in_turn`),
the load a run met (`LoadSampler`), and the report's lines (`say`, `out_lines`) and file
(`new_result`)."""

from __future__ import annotations

import datetime
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
CORES = os.cpu_count() or 2
TODAY = datetime.date.today().isoformat()  # the day the benchmark started: one date for all its files
REPEATS = 3  # timed runs of each figure, the fastest kept (the machine is shared)
RESULTS = ROOT / "benchmarks" / "results"
out_lines: list[str] = []


def new_result(stem: str, results: Path = RESULTS) -> Path:
    """`results`/STEM.md, else STEM-2.md, STEM-3.md...: the first not there yet, so that a second
    run of a benchmark on one day writes its report beside the first's (a tracked file), not over it."""
    path, n = results / f"{stem}.md", 1
    while path.exists():
        n += 1
        path = results / f"{stem}-{n}.md"
    return path


def say(line: str = "") -> None:
    print(line, flush=True)
    out_lines.append(line)


def commit(where: Path = ROOT) -> str:
    """The short hash of the checkout's HEAD."""
    return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=where, capture_output=True,
                          text=True, check=True).stdout.strip()


def verdict(ok: bool) -> str:
    return "met" if ok else "NOT met"


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


WORKSPACES: list[Path] = []


def workspace(name: str, rev: str | None = None, parent: Path | None = None) -> Path:
    """A copy of the project's tracked files (at git revision `rev`, else as they are in the
    checkout), beside the project so ../shared resolves (`parent`: elsewhere, for a copy that
    needs no ../shared)."""
    dest = Path(tempfile.mkdtemp(prefix=f"crmatrix-bench-{name}-", dir=parent or ROOT.parent))
    WORKSPACES.append(dest)
    if rev is not None:
        archive = subprocess.run(["git", "archive", rev], cwd=ROOT, capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
        return dest
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split("\0")
    for rel in filter(None, files):
        if (ROOT / rel).is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, dest / rel)
    return dest

def snakemake(ws: Path, config: str, *flags: str, keep: bool = False, env: dict[str, str] | None = None,
              launcher: list[str] | None = None, venv_bin: Path = BIN):
    """Seconds of one `snakemake --profile profiles/local --cores N all --configfile CONFIG` in the
    workspace, as `make run` runs it (its library imported from the workspace's src/, so a copy
    of another revision runs its own code; its cache the config's, results/cache in the workspace;
    `env`: more variables; `launcher`: the command starting Snakemake, when not `venv_bin`'s script; `venv_bin`:
    the virtualenv's, this checkout's by default); with `keep`, also its output and the CPU seconds of
    it and its jobs (from /usr/bin/time: the process tree's, waited-for children included)."""
    env = {**os.environ, "PATH": f"{venv_bin}:{os.environ['PATH']}", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "PYTHONPATH": str(ws / "src"), **(env or {})}
    timing = ws / "time.txt"
    t0 = time.perf_counter()
    proc = subprocess.run(["/usr/bin/time", "-f", "%U %S", "-o", str(timing),
                           *(launcher or [str(venv_bin / "snakemake")]), "--profile", "profiles/local", "--cores",
                           str(CORES), "all", "--configfile", config, *flags],
                          cwd=ws, env=env, capture_output=True, text=True, timeout=3 * 3600)
    secs = time.perf_counter() - t0
    if proc.returncode:
        sys.exit(f"snakemake failed in {ws}:\n{proc.stderr[-3000:]}")
    if not keep:
        return secs
    cpu = sum(float(x) for x in timing.read_text().split()[-2:])
    return secs, (proc.stdout + proc.stderr, cpu)

def jobs_per_rule(output: str) -> dict[str, int]:
    """The job counts of Snakemake's "Job stats" table in a run's output (`all` left out)."""
    table = output.split("Job stats:", 1)[1] if "Job stats:" in output else ""
    counts = {}
    for line in table.splitlines()[3:]:
        parts = line.split()
        if len(parts) != 2 or not parts[1].isdigit():
            break
        if parts[0] not in ("all", "total"):
            counts[parts[0]] = int(parts[1])
    return counts


def in_turn(**timers) -> dict[str, list[float]]:
    """Each timer's seconds over REPEATS rounds, the timers taking turns within a round, so that
    the figures compared meet the same load."""
    times: dict[str, list[float]] = {name: [] for name in timers}
    for _ in range(REPEATS):
        for name, timer in timers.items():
            times[name].append(timer())
    return times


class LoadSampler:
    """The 1-minute load average every 30 s while a run goes on (the machines are shared: a
    wall time is read beside the load it met)."""

    def __init__(self):
        self.samples: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self):
        while not self._stop.is_set():
            self.samples.append(os.getloadavg()[0])
            self._stop.wait(30)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    def summary(self) -> str:
        s = self.samples or [os.getloadavg()[0]]
        return f"median {statistics.median(s):.1f}, max {max(s):.1f}, min {min(s):.1f} over {len(s)} samples"
