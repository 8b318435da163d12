"""Import benchmark, run by hand (not in CI): `.venv/bin/python benchmarks/imports.py [REV]`.

Prints, and writes to benchmarks/results/imports-<date>.md (issue 48, "jobs that start light"):
  1. each rule's stage module (workflow/scripts/<rule>.py imports crmatrix.stages.<rule>): its
     import time, the cumulative time `python -X importtime -c "import crmatrix.stages.<rule>"`
     reports for it, median of 5 fresh interpreters, and the heavy packages it loads; the heaviest named;
  2. one `cell_stats` job's CPU (user + system, /usr/bin/time, median of 5): the job's own process as
     its rule's shell command starts it (common.smk's `light`), on two hand-made runs of
     tests/fixture_runs.py, an arm's cell and the baseline's, and the arm's with what `script:`'s
     preamble imports put first, in turns; and where the arm's job's imports go (`-X importtime`
     of its process: the stage, numpy).
With REV (a git revision), the same of REV's library (a copy of it), timed in turns with this
checkout's, so the two compare within one run on a shared machine; the cells both write are
compared byte for byte. (Part 2 runs this checkout's script, which needs a library with
crmatrix.pipeline.shell_job: a REV from before it compares in part 1 only.)
"""

from __future__ import annotations

import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from timing import BIN, ROOT, TODAY, WORKSPACES, commit, new_result, out_lines, say, uptime, workspace

RUNS = 5
# third-party packages a job should load only when its stage uses them
HEAVY = ("numpy", "scipy", "pandas", "altair", "vl_convert", "torch", "onnxruntime", "transformers", "mlflow",
         "tree_sitter", "git", "bm25s", "tiktoken", "yaml", "jsonschema", "rapidfuzz")


def import_time(src: Path, module: str) -> tuple[float, set[str]]:
    """Milliseconds `-X importtime` gives `module` in a fresh interpreter with `src` first on
    its path, and the top-level packages it loaded."""
    env = {"PYTHONPATH": str(src), "HF_HUB_OFFLINE": "1", "PATH": f"{BIN}:/usr/bin:/bin"}
    proc = subprocess.run([sys.executable, "-X", "importtime", "-c", f"import {module}"], capture_output=True,
                          text=True, env=env, check=True)
    total, loaded = None, set()
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line or "cumulative" in line:
            continue
        _, cumulative, name = line.split("|")
        loaded.add(name.strip().split(".")[0])
        if name.strip() == module:
            total = int(cumulative) / 1000
    return total, loaded


def stage_imports(srcs: dict[str, Path]) -> None:
    # each script's stage (build_system_index_commits runs build_system_index's)
    stages = {p.stem: re.search(r"from crmatrix\.stages import (\w+)", p.read_text()).group(1)
              for p in (ROOT / "workflow" / "scripts").glob("*.py")}
    rules = sorted(stages)
    times: dict[str, dict[str, list[float]]] = {label: {r: [] for r in rules} for label in srcs}
    heavy: dict[str, dict[str, set[str]]] = {label: {} for label in srcs}
    for _ in range(RUNS):
        for rule in rules:
            for label, src in srcs.items():  # in turns: both meet the same load
                ms, loaded = import_time(src, f"crmatrix.stages.{stages[rule]}")
                times[label][rule].append(ms)
                heavy[label][rule] = loaded & set(HEAVY)
    say("## 1. Each rule's stage module: import time (ms, median of 5 fresh interpreters)")
    say("")
    labels = list(srcs)
    say("| rule | " + " | ".join(f"{label}: ms | {label}: heavy packages" for label in labels) + " |")
    say("|---|" + "---:|---|" * len(labels))
    medians = {label: {r: statistics.median(t) for r, t in times[label].items()} for label in labels}
    for rule in sorted(rules, key=lambda r: -medians[labels[-1]][r]):
        say(f"| {rule} | " + " | ".join(f"{medians[label][rule]:.0f} | {', '.join(sorted(heavy[label][rule])) or '-'}"
                                         for label in labels) + " |")
    say("")
    for label in labels:
        top = max(rules, key=lambda r: medians[label][r])
        say(f"{label}: the heaviest is **{top}** ({medians[label][top]:.0f} ms); all {len(rules)} modules "
            f"{sum(medians[label].values()):.0f} ms in all.")
    say("")


FIXTURE = """
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
import fixture_runs as f
for doc in f.varied_run_docs():
    if (doc["dataset"], doc["system"]) == ("gamma", "builtin") and doc["arm"] in ("baseline", "stacked"):
        f.write(Path("runs") / f"{doc['arm']}.json", doc)
"""
# The two cells' jobs, as the rule's shell command starts them (common.smk's `light`): the script,
# the job's log, its files and its parameters (crmatrix.pipeline.shell_job)
CELLS = {
    "arm": {"input": {"run": "runs/stacked.json", "base": "runs/baseline.json"}, "output": "cells/stacked.json"},
    "baseline": {"input": {"run": "runs/baseline.json"}, "output": "cells/baseline.json"},
}


# What `script:`'s preamble imports in each job to unpickle it (snakemake.iocontainers.Snakemake
# and snakemake.io's lists), before the script's own imports: the cost a shell-started job spares.
PREAMBLE = "import pickle\nimport snakemake.io\nimport snakemake.iocontainers\n"


def cell_command(job: str) -> list[str]:
    from crmatrix.pipeline import shell_job

    cell = CELLS[job]
    files = shell_job.files(cell["input"], {"cell": cell["output"]}, [cell["output"]], {})
    return [str(ROOT / "workflow" / "scripts" / "cell_stats.py"), f"logs/{job}.log", files,
            shell_job.parameters({"headline_method": "hybrid", "format": None})]


def job_cpu(ws: Path, command: list[str], src: Path) -> float:
    """CPU seconds (user + system) of one run of a job's command, `src` first on its path."""
    env = {"PYTHONPATH": str(src), "HF_HUB_OFFLINE": "1", "PATH": f"{BIN}:/usr/bin:/bin"}
    subprocess.run(["/usr/bin/time", "-f", "%U %S", "-o", "time.txt", sys.executable, *command], cwd=ws,
                   env=env, check=True, capture_output=True)
    return sum(float(x) for x in (ws / "time.txt").read_text().split()[-2:])


def job_imports(ws: Path, command: list[str], src: Path) -> dict[str, float]:
    """Milliseconds `-X importtime` gives each top-level import of one run of a job's command,
    numpy's wherever it is imported, median of RUNS runs."""
    env = {"PYTHONPATH": str(src), "HF_HUB_OFFLINE": "1", "PATH": f"{BIN}:/usr/bin:/bin"}
    runs: dict[str, list[float]] = {}
    for _ in range(RUNS):
        err = subprocess.run([sys.executable, "-X", "importtime", *command], cwd=ws, env=env, check=True,
                             capture_output=True, text=True).stderr
        for line in err.splitlines():
            if line.startswith("import time:") and "cumulative" not in line:
                _, cumulative, name = line.split("|")
                if not name.startswith("  ") or name.strip() == "numpy":
                    runs.setdefault(name.strip(), []).append(int(cumulative) / 1000)
    return {name: statistics.median(ms) for name, ms in runs.items()}


def cell_jobs(srcs: dict[str, Path]) -> None:
    srcs = {label: src for label, src in srcs.items() if (src / "crmatrix" / "pipeline" / "shell_job.py").exists()}
    ws = Path(tempfile.mkdtemp(prefix="crmatrix-bench-cells-"))
    WORKSPACES.append(ws)
    env = {"PYTHONPATH": str(ROOT / "src"), "HF_HUB_OFFLINE": "1", "PATH": f"{BIN}:/usr/bin:/bin"}
    subprocess.run([sys.executable, "-c", FIXTURE, str(ROOT / "tests")], cwd=ws, env=env, check=True)
    (ws / "logs").mkdir()
    jobs = {job: cell_command(job) for job in CELLS}
    # the same job with what `script:`'s preamble imports to unpickle the job put first
    (ws / "with_preamble.py").write_text(PREAMBLE + Path(jobs["arm"][0]).read_text())
    written = {job: ws / cell["output"] for job, cell in CELLS.items()}
    cpu = {(label, job): [] for label in srcs for job in jobs}
    preamble = {label: [] for label in srcs}
    outputs: dict[str, list[bytes]] = {label: [] for label in srcs}
    for _ in range(RUNS):
        for job, command in sorted(jobs.items()):
            for label, src in srcs.items():
                cpu[label, job].append(job_cpu(ws, command, src))
                outputs[label].append(written[job].read_bytes())
                if job == "arm":
                    preamble[label].append(job_cpu(ws, [str(ws / "with_preamble.py"), *command[1:]], src))
    say(f"## 2. One cell_stats job's CPU (s, user + system, median of {RUNS})")
    say("")
    say("| job | " + " | ".join(srcs) + " |")
    say("|---|" + "---:|" * len(srcs))
    for job in sorted(jobs):
        say(f"| {job}'s cell | " + " | ".join(f"{statistics.median(cpu[label, job]):.3f}" for label in srcs) + " |")
    say("| arm's cell, with `script:`'s preamble imports | "
        + " | ".join(f"{statistics.median(preamble[label]):.3f}" for label in srcs) + " |")
    say("")
    say("Where an arm's cell_stats job's imports go (ms, `-X importtime` of the job's process, median of 5):")
    say("")
    spent = {label: job_imports(ws, jobs["arm"], src) for label, src in srcs.items()}
    here = list(srcs)[-1]
    shown = sorted({n for ms in spent.values() for n, t in ms.items() if t >= 5}, key=lambda n: -spent[here].get(n, 0))
    say("| import | " + " | ".join(srcs) + " |")
    say("|---|" + "---:|" * len(srcs))
    for name in shown:
        say(f"| {name} | " + " | ".join(f"{spent[label].get(name, 0):.0f}" for label in srcs) + " |")
    say("")
    same = len({tuple(o) for o in outputs.values()}) == 1
    say(f"The cells written are {'byte-identical' if same else 'NOT identical'} across the revisions.")
    say("")


def main() -> None:
    """`imports.py [REV]`: this checkout's library, and REV's before it when given."""
    rev = sys.argv[1] if len(sys.argv) > 1 else None
    srcs = {}
    if rev:
        srcs[rev] = workspace(f"imports-{rev}", rev, parent=Path(tempfile.gettempdir())) / "src"
    here = f"{commit()} + edits (this checkout)"
    srcs[here] = ROOT / "src"
    say(f"# Imports of each job — {TODAY}")
    say("")
    say(f"Load at the start: `{uptime()}`. The machine is shared (other work runs beside this): "
        "read the figures against each other within this run, not against another run's.")
    say("")
    try:
        stage_imports(srcs)
        cell_jobs(srcs)
    finally:
        for ws in WORKSPACES:
            shutil.rmtree(ws, ignore_errors=True)
    say(f"Load at the end: `{uptime()}`.")
    dest = new_result(f"imports-{TODAY}")
    dest.write_text("\n".join(out_lines) + "\n")
    print(f"wrote {dest}")


if __name__ == "__main__":
    main()
