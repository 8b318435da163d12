"""A small mutation check of the test suite (by hand, not in CI: it runs the suite once per bug).

Each mutation is a realistic bug put into a copy of the project; the suite runs on the
copy (fast unit tests first, stopping at the first failure) and the bug counts as caught
when the suite fails. Prints a Markdown table, which is committed under benchmarks/results/.

    .venv/bin/python benchmarks/mutations.py > benchmarks/results/mutations-DATE.md
    .venv/bin/python benchmarks/mutations.py 9 11    # only these, without the control run
"""

from __future__ import annotations

import datetime
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# (file, the exact code, the bug, what a user would see)
MUTATIONS = [
    ("src/crmatrix/systems/builtin.py", '"model": models[arm.model]}', '"model": None}',
     "index key ignores the model: an INT8 arm reuses the fp32 index"),
    ("src/crmatrix/evaluation/trec.py", "enumerate(docs, 1)", "enumerate(docs, 0)", "TREC run ranks start at 0"),
    ("src/crmatrix/engine/knobs/kinds.py", 'return "1" if self.read(var, raw) else "0"',
     'return "0" if self.read(var, raw) else "1"', "canonical spelling inverts on/off"),
    ("src/crmatrix/evaluation/metrics.py", "return float(1.0 / ranks[0]) if ranks.size else 0.0",
     "return float(1.0 / (ranks[0] + 1)) if ranks.size else 0.0", "reciprocal rank off by one"),
    ("src/crmatrix/analysis/stats.py", "scaled = p[order] * (p.size - np.arange(p.size))",
     "scaled = p[order] * (np.arange(p.size) + 1)", "Holm multiplies by the wrong factor"),
    ("src/crmatrix/datasets/relevance.py",
     "return any(name == symbol and path.endswith(suffix) for symbol, suffix in golds)",
     "return any(name == symbol and suffix in path for symbol, suffix in golds)",
     "gold suffix matched anywhere in the path"),
    ("src/crmatrix/corpora/tree.py", 'if b"\\0" in data[:8192]:', "if False:", "binary files indexed"),
    ("src/crmatrix/corpora/pins/pypi.py", "if got != sha256.lower():", "if False:", "sdist sha256 never checked"),
    ("src/crmatrix/hits.py", "return (-h.score, h.path, h.start_line, h.symbol)",
     "return (-h.score, h.start_line, h.path, h.symbol)", "tie-break by line before path"),
    ("src/crmatrix/codehash.py", "for node in ast.walk(ast.parse(source)):",
     "for node in ast.parse(source).body:", "code hash misses imports inside functions"),
    ("src/crmatrix/pipeline/locations.py", 'mirrors = [*matrix.git_mirrors, *_split(environ.get(MIRRORS_VAR, ""))]',
     'mirrors = [*_split(environ.get(MIRRORS_VAR, ""))]', "config mirrors never reach the jobs"),
    ("src/crmatrix/pipeline/jobs.py", "for stream in (log, terminal):", "for stream in (log,):",
     "a job's error only in its log"),
    ("src/crmatrix/evaluation/evaluate.py", 'failed = [r for r in rows if r["failure"]]', "failed = []",
     "failed queries not counted (and an all-failing system not stopped)"),
    ("src/crmatrix/engine/index.py", "if built != wanted:", "if False:",
     "an index serves an arm with other index-time knobs"),
    ("src/crmatrix/atomic.py", "        if tmp.exists():\n            shutil.rmtree(tmp, ignore_errors=True)\n",
     "        pass\n", "a failed stage leaves its staging directory in results/"),
    # indexes prove their bytes
    ("src/crmatrix/integrity.py", 'if got != want["sha256"]:', "if False:",
     "an index's altered bytes of the same size go unnoticed"),
    ("src/crmatrix/engine/index.py", "    integrity.verify(index_dir)\n", "",
     "the builtin's index is loaded without checking its bytes"),
    # the test-split ledger refuses before anything is removed
    ("src/crmatrix/pipeline/rescoring.py", "    if force:\n        return\n", "    return\n",
     "a second test scoring is refused only by the job, after Snakemake removed the run"),
    ("workflow/rules/common.smk", "        *PLAN.run_files(),\n", "",
     "a run a failed job removed is never planned again (the matrix keeps its column)"),
    ("src/crmatrix/pipeline/rescoring.py",
     "model = read_model(p.model_dir) if p.model_dir is not None else None", "model = None",
     "the key checked at planning leaves out the model"),
    ("src/crmatrix/stages/evaluate_arm.py",
     'sysobj.provenance().get("model"))', "None)",
     "the key checked before scoring leaves out the model"),
    # the tests the last check asked for
    ("src/crmatrix/evaluation/evaluate.py", "timeout_s=guard.timeout_s * len(queries)", "timeout_s=guard.timeout_s",
     "a batch gets one query's time limit"),
    # runs prove their bytes (issue 33)
    ("src/crmatrix/results/run.py", "integrity.unseal(doc, str(where))",
     "{k: v for k, v in doc.items() if k != integrity.CHECKSUM}",
     "a run is read without its checksum checked: a hand-edited run reaches the matrix"),
    ("src/crmatrix/integrity.py", "    if got != want:\n", "    if False:\n",
     "a run whose content changed since it was written goes unnoticed"),
    # a file is keyed by its content, not its mtime
    ("workflow/rules/datasets.smk",
     '        code=code("prepare_dataset"),\n        dataset_sha256=by(PLAN.dataset_sha256, "dataset"),\n',
     '        code=code("prepare_dataset"),\n',
     "the prepared dataset is keyed by its file's mtime alone: an older copy restored keeps the old queries"),
    ("src/crmatrix/corpora/pins/path.py", "        return file_blob_id(path)\n",
     '        return f"{st.st_size} {st.st_mtime_ns}"\n',
     "a path corpus is fingerprinted by sizes and mtimes: an edit that keeps both re-runs nothing"),
]

# Fast unit tests first, so a caught bug costs seconds; the end-to-end files last.
SLOW = ["test_embed.py", "test_engine.py", "test_ir_measures.py", "test_workflow.py", "test_index_workflow.py",
        "test_graph_workflow.py", "test_systems_workflow.py", "test_formats_workflow.py", "test_derived_workflow.py",
        "test_slices.py", "test_install.py", "test_cluster.py", "test_report.py", "test_readme.py", "test_recovery.py"]


def project_copy(dest: Path) -> None:
    subprocess.run(["git", "clone", "-q", "--no-checkout", str(ROOT), str(dest)], check=True)
    subprocess.run(["git", "reset", "-q"], cwd=dest, check=True)  # an index, so the copy's tests can list its files
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    for rel in filter(None, files.split("\0")):
        if (ROOT / rel).is_file() or (ROOT / rel).is_symlink():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, dest / rel, follow_symlinks=False)


def test_files(root: Path) -> list[str]:
    names = sorted(p.name for p in (root / "tests").glob("test_*.py"))
    return [f"tests/{n}" for n in names if n not in SLOW] + [f"tests/{n}" for n in SLOW if n in names]


def run_suite(root: Path) -> tuple[bool, str, float]:
    """Whether the suite failed, the first failing test with its error line, and the seconds.

    On a machine shared with other work, a signal from outside may end pytest (no test failed,
    a negative exit status): that run tells nothing, so it is run again, once."""
    env = {**os.environ, "PYTHONPATH": str(root / "src")}
    for attempt in (1, 2):
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "-rfE",
                               "--tb=line", *test_files(root)], cwd=root, env=env, capture_output=True, text=True,
                              timeout=7200)
        if proc.returncode >= 0 or attempt == 2:
            break
        print(f"pytest ended by signal {-proc.returncode} after {time.perf_counter() - t0:.0f} s: run again",
              file=sys.stderr, flush=True)
    failed = [line.split(" ", 1)[1] for line in proc.stdout.splitlines() if line.startswith(("FAILED ", "ERROR "))]
    if proc.returncode != 0 and not failed:  # never shown as a pass
        failed = [f"no test failed: pytest exit status {proc.returncode}"]
    return proc.returncode != 0, (failed[0][:160].replace("|", "/") if failed else ""), time.perf_counter() - t0


def main(only: set[int]) -> None:
    print(f"# Mutation check of the test suite — {datetime.date.today().isoformat()}\n")
    print("Each bug put into a copy of the project by hand (`benchmarks/mutations.py`), the suite run "
          "(`pytest -x`, unit tests first), the bug removed.\n")
    print("| # | bug | caught by | seconds |")
    print("|---|---|---|---:|")
    caught = 0
    # beside the project, so that ../shared (test inputs) resolves from the copy as from the project
    with tempfile.TemporaryDirectory(prefix=".crmatrix-mutant-", dir=ROOT.parent) as tmp:
        base = Path(tmp)
        project_copy(base)
        if not only:
            failed, test, secs = run_suite(base)  # the control: a bug "caught" by a failing suite means nothing
            print(f"| 0 | none (the control) | {test or 'suite passes'} | {secs:.0f} |", flush=True)
            if failed:
                sys.exit("the unmutated suite fails: fix that first")
        for i, (rel, old, new, what) in enumerate(MUTATIONS, 1):
            if only and i not in only:
                continue
            path = base / rel
            text = path.read_text()
            assert text.count(old) == 1, f"{rel}: the mutation's code is not there exactly once: {old!r}"
            path.write_text(text.replace(old, new))
            try:
                hit, test, secs = run_suite(base)
            finally:
                path.write_text(text)
            caught += hit
            print(f"| {i} | {what} (`{rel}`) | {test or '**missed**'} | {secs:.0f} |", flush=True)
    print(f"\n{caught} of {len(only or MUTATIONS)} caught.")


if __name__ == "__main__":
    main({int(a) for a in sys.argv[1:]})
