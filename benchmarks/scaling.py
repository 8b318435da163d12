"""Scaling benchmark (issue 29, point 3), run by hand (not in CI):

    PYTHONPATH=src .venv/bin/python benchmarks/scaling.py
    PYTHONPATH=src .venv/bin/python benchmarks/scaling.py --finished WS CONFIG REV

Synthetic matrices of ~1k, ~5k and ~20k jobs, each in its own copy of the project (under the
system's temporary directory; no ../shared needed). Per size: planning (`snakemake -n` of the
matrix with nothing done, and the share of it in our code), the no-op on a finished run, and
Snakemake's fair floor for the same DAG; the growth exponent b of time ~ a * jobs^b for each; the
per-job overhead of the 1k matrix run for real. Prints a Markdown report and writes it to
benchmarks/results/scaling-<date>.md.

The DAG's shape: the default matrix (config/config.yaml) with its builtin system alone (the peer
installs from PyPI): its 13 arms, two models, four methods and its release/candidate gate, over
three corpora -- `self` (this repository at the default matrix's pin, 20 files), and the tests'
tiny git repository and JavaScript path corpus (tests/conftest.py, tests/test_workflow.py) --
and D datasets, round-robin over the corpora, each a seeded sample of its corpus's queries
(datasets/self.json's, the tests'). The matrix grows by datasets, as a matrix of many
repositories' query sets does: 31 jobs per dataset (an evaluation and its cell per arm, the
dataset's preparation, audit, grep baseline and two query embeddings), 25 for the corpora, 23
for the models, the matrix, the gate and the charts.

A finished run: the 1k matrix is run for real. The 5k and 20k matrices would take hours, so
their finished state is made the way Snakemake marks jobs done itself: every planned output
created (empty; a directory where the job's rule has one), then `snakemake --touch --forceall`,
which walks the DAG in order, touching each job's outputs and writing its metadata record as a
finished job's (the same code path, `persistence.finished`). (Without --forceall, outputs that
exist and have no record are up to date to Snakemake: it would touch nothing and record
nothing, and the no-op would read no records.) A no-op reads no output's contents: only each
output's existence, its mtime (a directory's from its `.snakemake_timestamp`) and its metadata
record. The method is checked at 1k: a second copy of the 1k matrix made finished that way,
its records against the real run's, and its no-op beside the real run's.

The fair floor: a trivial Snakefile of the same DAG -- one job per real job, with as many input
and output files (a directory where the real one is), each input the output of the same
producer as in the real DAG, or a source file -- finished the same way (`--touch`), its no-op
timed like the matrix's. Our Snakefile ends in `gc.freeze()` (its comment says why), which any
Snakefile could: a copy of the floor ending in it too is timed beside it, and the report gives
the no-op against both.

With `--finished WS CONFIG REV`, the same for one finished run of a real config: planning in a
fresh copy of revision REV, the no-op in WS against the fair floor of its DAG (written to
benchmarks/results/dag-<config>-<date>.md); the seed matrix's, after `pipeline.py seed` with
its workspace kept (`--keep`).
"""

from __future__ import annotations

import base64
import datetime
import json
import os
import random
import shutil
import sys
import tempfile
from pathlib import Path

import timing
import yaml
from clocks import benchmark_tsvs, job_clock, job_reports, plan_profile, profile_summary
from floors import (
    TARGET_PLAN_S,
    TOUCH,
    against_floors,
    dag_table,
    directory_outputs,
    finished,
    finished_dag,
    finished_floor,
    planned_jobs,
)
from scaling_report import report
from timing import (
    BIN,
    REPEATS,
    ROOT,
    TODAY,
    LoadSampler,
    commit,
    in_turn,
    say,
    snakemake,
    uptime,
    verdict,
    workspace,
)

sys.path.insert(0, str(ROOT / "tests"))
# the tests' tiny corpora and their queries
from conftest import make_two_commit_repo
from test_workflow import GIT_DATASET, MORE_JS, PATH_CORPUS, PATH_DATASET

# label -> datasets; jobs = 31 per dataset + 48, `all` aside (the docstring's shape)
SIZES = {"1k": 31, "5k": 160, "20k": 644}
DEFAULT_SIZES = dict(SIZES)
CONFIG = "config/scaling.yaml"
SELF_SAMPLE = 14  # queries per dataset of `self` (of datasets/self.json's 28)


def write_matrix(ws: Path, datasets: int, repo: Path, commit: str) -> str:
    """The scaling matrix of `datasets` datasets in the workspace (the docstring's shape); its git
    corpus `repo` at `commit` lies outside it, so that two copies plan the same parameters."""
    for rel, text in {**PATH_CORPUS, **MORE_JS}.items():
        (ws / "local" / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / "local" / rel).write_text(text)
    cfg = yaml.safe_load((ws / "config" / "config.yaml").read_text())
    # the workspace copy is no git repository: `self` is cloned from this checkout
    cfg["corpora"] = {"self": {**cfg["corpora"]["self"], "git": str(ROOT)},
                      "gitc": {"git": str(repo), "commit": commit},
                      "pathc": {"path": "local", "language": "javascript"}}
    pools = {"self": json.loads((ROOT / "datasets" / "self.json").read_text()), "gitc": GIT_DATASET,
             "pathc": PATH_DATASET}
    (ws / "ds").mkdir()
    cfg["datasets"] = {}
    for k in range(datasets):
        corpus = list(pools)[k % len(pools)]
        pool = pools[corpus]
        name = f"d{k:04d}"
        (ws / "ds" / f"{name}.json").write_text(
            json.dumps(random.Random(k).sample(pool, min(len(pool), SELF_SAMPLE)), indent=1))
        cfg["datasets"][name] = {"file": f"ds/{name}.json", "corpus": corpus,
                                 "archetype": ("library", "framework")[k % 2]}
    cfg["systems"] = {"builtin": cfg["systems"]["builtin"]}
    (ws / CONFIG).write_text(yaml.safe_dump(cfg, sort_keys=False))
    return CONFIG


# -- the DAG as Snakemake plans it, and a finished state of it ----------------------------------


def create_outputs(ws: Path, jobs: list[dict], dirs: set[tuple[str, int]]) -> None:
    """Every output of the jobs, empty (a no-op never reads one)."""
    for j in jobs:
        for k, out in enumerate(j["output"]):
            if (j["rule"], k) in dirs:
                (ws / out).mkdir(parents=True, exist_ok=True)
            else:
                (ws / out).parent.mkdir(parents=True, exist_ok=True)
                (ws / out).touch()


def touch_matrix(ws: Path, config: str, jobs: list[dict], dirs: set[tuple[str, int]]) -> float:
    """The matrix's planned jobs made finished without running them (the docstring's method);
    seconds of the `--touch` run."""
    create_outputs(ws, jobs, dirs)
    secs, (out, _) = snakemake(ws, config, keep=True, launcher=TOUCH)
    if "not touched because they don't exist" in out:
        sys.exit(f"--touch in {ws} found outputs missing:\n{out[-3000:]}")
    return secs


def records(ws: Path) -> dict[str, dict]:
    """Snakemake's metadata record of each output, by the output's path."""
    meta = ws / ".snakemake" / "metadata"
    # a name longer than the file system's limit is cut into directories, each part but the last "@"-prefixed
    return {base64.urlsafe_b64decode("".join(part.lstrip("@") for part in p.relative_to(meta).parts)).decode():
            json.loads(p.read_text()) for p in meta.rglob("*") if p.is_file()}


# -- the fair floor ------------------------------------------------------------------------------


# -- per size -----------------------------------------------------------------------------------


def plan_share(ws: Path, config: str) -> float:
    """The share of `snakemake -n`'s main-thread samples with our code on the stack
    (`clocks.plan_profile`: the Snakefile, its rule files, crmatrix)."""
    return plan_profile(ws, config, {"PYTHONPATH": str(ws / "src")})["share"]


def measure(label: str, datasets: int, parent: Path, corpus: tuple[Path, str], dirs: set | None,
            profile: bool) -> dict:
    """One size: planning, a finished state (run for real when `dirs` is None, else touched),
    its no-op and the fair floor; with `profile`, planning under cProfile too."""
    r = {"label": label, "datasets": datasets}
    ws = workspace(f"scaling-{label}", parent=parent)
    config = write_matrix(ws, datasets, *corpus)
    # the first planning of a fresh copy compiles its modules and writes the code-hash memo
    r["plan_first"], (out, _) = snakemake(ws, config, "-n", keep=True)
    r["jobs_planned"] = planned_jobs(out)
    r["jobs"] = sum(1 for j in r["jobs_planned"] if j["rule"] != "all")
    r["plans"] = [snakemake(ws, config, "-n") for _ in range(REPEATS)]
    r["plan"] = min(r["plans"])
    r["plan_share"] = plan_share(ws, config)
    if profile:
        prof = parent / f"plan-{label}.prof"
        cprofile = [sys.executable, "-m", "cProfile", "-o", str(prof), str(BIN / "snakemake")]
        r["profile_wall"] = snakemake(ws, config, "-n", launcher=cprofile)
        r["profile"] = profile_summary(prof, ws)
    if dirs is None:
        r["finish"] = "run for real"
        r["finish_s"], (out, r["run_cpu"]) = snakemake(ws, config, keep=True, env=job_clock(ws))
        r["clock"] = job_reports(ws / "job-clock")
        r["tsv"] = benchmark_tsvs(ws)
        dirs = directory_outputs(ws, r["jobs_planned"])
    else:
        r["finish"] = "`--touch`"
        r["finish_s"] = touch_matrix(ws, config, r["jobs_planned"], dirs)
    r["dirs"] = dirs
    r["finished_plan"], (out, _) = snakemake(ws, config, "-n", keep=True)
    finished(out, ws)
    r["noop_share"] = plan_share(ws, config)
    r["floor"] = finished_floor(parent, r["jobs_planned"], dirs)
    times = against_floors(lambda: snakemake(ws, config), r["floor"]["where"])
    r["noops"], r["floor"]["noops"], r["floor"]["frozen_noops"] = times["noop"], times["floor"], times["frozen"]
    r["noop"], r["floor"]["noop"], r["floor"]["frozen"] = min(times["noop"]), min(times["floor"]), min(times["frozen"])
    r["ws"] = ws
    return r


def touch_check(real: dict, parent: Path, corpus: tuple[Path, str]) -> dict:
    """The 1k matrix made finished by `--touch` in a second copy: its metadata records against the
    real run's, field by field, and its no-op against the real run's (timed in turn)."""
    ws = workspace("scaling-touched", parent=parent)
    config = write_matrix(ws, real["datasets"], *corpus)
    touch_s = touch_matrix(ws, config, real["jobs_planned"], real["dirs"])
    finished(snakemake(ws, config, "-n", keep=True)[1][0], ws)
    times = in_turn(real=lambda: snakemake(real["ws"], config), touched=lambda: snakemake(ws, config))
    ran, touched = records(real["ws"]), records(ws)
    differ: dict[str, int] = {}
    for path, rec in ran.items():
        for key in set(rec) | set(touched.get(path, {})):
            if rec.get(key) != touched.get(path, {}).get(key):
                differ[key] = differ.get(key, 0) + 1
    shutil.rmtree(ws, ignore_errors=True)
    return {"touch": touch_s, "noop": min(times["touched"]), "noops": times["touched"],
            "real_noop": min(times["real"]), "real_noops": times["real"], "records": len(ran),
            "touched_records": len(touched), "shared": len(set(ran) & set(touched)), "differ": differ,
            "fields": sorted(set().union(*map(set, ran.values())))}


# -- where the time goes --------------------------------------------------------------------------


def finished_main(ws: Path, config: str, rev: str) -> None:
    """`scaling.py --finished WS CONFIG REV`: the DAG of a finished run of CONFIG in WS (a copy of
    revision REV beside ../shared, such as `pipeline.py seed` leaves with its workspace kept),
    written to benchmarks/results/dag-<config>-<date>.md."""
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    start = uptime()
    shape = finished_dag(ws, config, rev)
    say(f"# The DAG of {config}, finished — {TODAY}")
    say("")
    say(f"The finished run in {ws.name} (crmatrix at {rev}); the no-op and the floors fastest of {REPEATS} runs "
        f"taking turns; {start} at the start, {uptime()} at the end.")
    for line in dag_table(shape):
        say(line)
    dest = timing.new_result(f"dag-{Path(config).stem}-{TODAY}")
    dest.write_text("\n".join(timing.out_lines) + "\n")
    print(f"wrote {dest}")


def planning_main(sizes: list[int]) -> None:
    """`scaling.py --planning D...`: each size's planning alone (`snakemake -n` with nothing done, the
    fastest of REPEATS after a first that compiles and writes the code-hash memo), without the
    finished states, no-ops and floors the full benchmark takes most of its hour on; written to
    benchmarks/results/scaling-planning-<sizes>-<date>.md."""
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    start = uptime()
    parent = Path(tempfile.mkdtemp(prefix="crmatrix-bench-scaling-"))
    say(f"# Planning alone — {TODAY}")
    say("")
    say(f"crmatrix at {commit()}; benchmarks/scaling.py's synthetic matrices (its docstring), planning "
        f"`snakemake --profile profiles/local --cores 2 all --configfile ... -n` with nothing done, the fastest "
        f"of {REPEATS} after a first. `uptime` at the start: `{start}`.")
    say("")
    say("| datasets | jobs | first planning s | **planning** s (runs) | <= 60 s |")
    say("|---:|---:|---:|---:|---|")
    try:
        corpus = make_two_commit_repo(parent / "gitrepo")[:2]
        for datasets in sizes:
            ws = workspace(f"scaling-plan-{datasets}", parent=parent)
            config = write_matrix(ws, datasets, *corpus)
            first, (out, _) = snakemake(ws, config, "-n", keep=True)
            jobs = sum(1 for j in planned_jobs(out) if j["rule"] != "all")
            plans = [snakemake(ws, config, "-n") for _ in range(REPEATS)]
            say(f"| {datasets} | {jobs} | {first:.1f} | **{min(plans):.1f}** ({', '.join(f'{p:.1f}' for p in plans)}) "
                f"| {verdict(min(plans) <= TARGET_PLAN_S)} |")
            shutil.rmtree(ws, ignore_errors=True)
    finally:
        shutil.rmtree(parent, ignore_errors=True)
    say("")
    say(f"`uptime` at the end: `{uptime()}`.")
    dest = timing.new_result(f"scaling-planning-{'-'.join(map(str, sizes))}-{TODAY}")
    dest.write_text("\n".join(timing.out_lines) + "\n")
    print(f"wrote {dest}")


def main() -> None:
    """`scaling.py [D ...]`: the sizes' datasets (default: SIZES; a few small ones try the benchmark out,
    one of 31 measures the 1k size alone); `scaling.py --finished WS CONFIG REV`: `finished_main`;
    `scaling.py --planning D...`: `planning_main`."""
    if sys.argv[1:2] == ["--finished"]:
        ws, config, rev = sys.argv[2:5]
        return finished_main(Path(ws).resolve(), config, rev)
    if sys.argv[1:2] == ["--planning"]:
        return planning_main([int(d) for d in sys.argv[2:]])
    if sys.argv[1:]:
        SIZES.clear()
        SIZES.update({f"{d} datasets": int(d) for d in sys.argv[1:]})
    # bytecode written and reused by every Snakemake and job process, as on a user's machine (with
    # PYTHONDONTWRITEBYTECODE=1 each would compile crmatrix's modules again)
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    start = uptime()
    parent = Path(tempfile.mkdtemp(prefix="crmatrix-bench-scaling-"))
    try:
        corpus = make_two_commit_repo(parent / "gitrepo")[:2]
        results, dirs = [], None
        labels = list(SIZES)
        for label in labels:
            print(f"{datetime.datetime.now():%H:%M:%S} {label}: {uptime()}", flush=True)
            with LoadSampler() as load:
                r = measure(label, SIZES[label], parent, corpus, dirs, profile=label == labels[-1])
            r["load"] = load.summary()
            dirs = r["dirs"]
            if label == labels[0]:
                check = touch_check(r, parent, corpus)
            else:
                shutil.rmtree(r["ws"], ignore_errors=True)
            results.append(r)
        report(results, check, start, uptime())
    finally:
        shutil.rmtree(parent, ignore_errors=True)
    # a run of other sizes is named by them, beside (not over) a run of the default ones
    sizes = "" if SIZES == DEFAULT_SIZES else "-" + "-".join(map(str, SIZES.values()))
    dest = timing.new_result(f"scaling{sizes}-{TODAY}")
    dest.write_text("\n".join(timing.out_lines) + "\n")
    print(f"wrote {dest}")


if __name__ == "__main__":
    main()
