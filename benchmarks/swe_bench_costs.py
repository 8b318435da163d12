"""The cost targets of SWE-bench localization (issue 29), run by hand after a cold run:

    make run CONFIG=config/swe-bench.yaml            # in a clean clone, cold
    .venv/bin/python benchmarks/swe_bench_costs.py CLONE [--repositories flask,sympy] [--parts distinct,commit,dag]
        [--note TEXT] [--out FILE | --write]

For the stages whose work should grow with new code, not with commits — symbol extraction
(`extract_repository`) and embedding and indexing (`build_repository_index`) — it prints, and
with `--out FILE` or `--write` (benchmarks/results/swe-bench-costs-<date>-clean.md, a tracked
file) keeps, per repository:

1. **The config against its distinct contents** (target <= 1.2x): the CPU the cold run's jobs
   of those stages took (their Snakemake benchmark files), against the same stages run here,
   cold (empty caches), over one synthetic commit that holds each distinct (path, blob) of the
   repository once. A path with several blobs keeps its first blob (in blob id order) and
   the k-th other one lies under `_v{k}/`: a path is once in a commit, and a distinct blob
   must stay a distinct document.
2. **A commit whose files all occurred before** (target <= 5 % of a cold commit): the stages
   run again here, with the cold run's caches, over the repository plus one synthetic commit —
   the files of its last commit in sha order, each path its first commit also holds at that
   one's blob, so every (path, blob) occurred before while the set is new — against the
   stages run cold (empty caches) over that last commit alone. This is what the DAG reruns for such a commit
   (its repository's store and index are one job each, grown from the run's, which its cache
   keeps: `crmatrix.versions.bases`; a run made before builds were kept has its stages run once more
   first, untimed, to keep them); the evaluations of the repository's datasets rerun too and
   are not counted here.
3. **The DAG** (targets: planning <= 60 s, a no-op <= 1.3x Snakemake's fair floor): planning
   (`snakemake -n` with nothing done, in a copy of the clone's commit beside it), the no-op on
   the finished clone, and the fair floor of the same DAG (benchmarks/floors.py's, plain and
   ending in `gc.freeze()` as our Snakefile does), the no-op and the floors timed in turn, the
   fastest of three each.

`--parts` measures some of the three (all by default); a run of only some writes
swe-bench-costs-<parts>-<date>-clean.md. The first compares with the cold run's jobs, so it
reads only when the clone's code is the run's; the other two run the clone's code on its caches
(a clone moved to a later commit and finished again by `snakemake --touch` measures that commit).

CPU is a process's and its children's (git's cat-file), user + system, all threads, as
Snakemake's benchmark files count a job's. Each repository is measured in a worker process
of its own, two at a time (as the run's jobs shared the 2 cores), the largest first; a worker
imports the library once (each job of the run also paid an interpreter and Snakemake's script
wrapper, about 2 CPU s). Embedding uses the config's `embed_threads`, as the jobs did.
"""

from __future__ import annotations

import concurrent.futures
import datetime
import hashlib
import json
import os
import resource
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import clocks
import finished_run
import floors
import timing

from crmatrix import atomic, config
from crmatrix.config.plan import Plan
from crmatrix.stages import build_repository_index, extract_repository
from crmatrix.versions import bases
from crmatrix.versions.repository import COMMITS, GIT, MANIFEST

CONFIG = "config/swe-bench.yaml"
SYSTEM = "builtin"
STAGES = ("extract_repository", "build_repository_index")
PARTS = ("distinct", "commit", "dag")  # the module's doc, points 1 to 3
WORKERS = 2


def cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def job_cpu(clone: Path, repo: str) -> float:
    """The CPU seconds of the run's jobs of STAGES for the repository (benchmark files
    RULE/REPO.tsv or RULE/REPO/...)."""
    return sum(job["cpu"] for name, job in clocks.benchmark_tsvs(clone).items()
               if job["rule"] in STAGES and Path(name).parts[1].removesuffix(".tsv") == repo)


def synthetic(source: Path, dest: Path, commits: dict[str, list]) -> Path:
    """A repository laid out as fetch_repository lays it out, over the source's git objects,
    holding `commits` (sha -> [path, blob, size] rows)."""
    dest.mkdir(parents=True)
    (dest / GIT).symlink_to((source / GIT).resolve())
    manifest = atomic.read_json(source / MANIFEST)
    atomic.write_json(dest / MANIFEST, {**manifest, "commits": len(commits)})
    atomic.write_json(dest / COMMITS, commits)
    return dest


def fake_sha(rows: list) -> str:
    return hashlib.sha1(json.dumps(rows, sort_keys=True).encode()).hexdigest()


def distinct_commit(commits: dict[str, list]) -> dict[str, list]:
    """One commit holding each distinct (path, blob) once (see the module's doc)."""
    blobs: dict[str, dict[str, int]] = defaultdict(dict)
    for files in commits.values():
        for path, blob, size in files:
            blobs[path][blob] = size
    rows = []
    for path, sizes in sorted(blobs.items()):
        for k, blob in enumerate(sorted(sizes)):
            rows.append([path if k == 0 else f"_v{k}/{path}", blob, sizes[blob]])
    return {fake_sha(rows): sorted(rows)}


def old_files_commit(commits: dict[str, list]) -> dict[str, list]:
    """The last commit's files (sha order: the layout holds no dates), each path the first
    commit holds at that one's blob."""
    order = sorted(commits)
    first = {path: (blob, size) for path, blob, size in commits[order[0]]}
    rows = sorted([path, *first.get(path, (blob, size))] for path, blob, size in commits[order[-1]])
    return {fake_sha(rows): rows}


def stages(repository: Path, work: Path, cache: Path, model: Path, knobs: dict, threads: int) -> tuple[float, float]:
    """(CPU s, wall s) of extracting the repository's symbols and building its index."""
    c0, t0 = cpu(), time.perf_counter()
    extract_repository.run(repository, work / "store", work / "store.json", cache)
    build_repository_index.run(repository=repository, store=work / "store", model_dir=model, knobs=dict(knobs),
                               cache_dir=cache, out=work / "index", files=True, threads=threads)
    return cpu() - c0, time.perf_counter() - t0


def measure(clone: Path, repo: str, parts: frozenset[str]) -> tuple[tuple | None, tuple | None]:
    """The repository's row of each table asked for (the module's doc, points 1 and 2), in a
    process of its own, so its CPU is its own."""
    os.chdir(clone)  # the config's paths (../shared) are relative to the project
    matrix = config.load(clone / CONFIG)
    plan = Plan(matrix)
    model = clone / "results" / "models" / matrix.default_model
    knobs = plan.index_knobs(SYSTEM, repo, plan.index_key(SYSTEM, matrix.baseline_arm, repo))
    source = clone / "results" / "repos" / repo
    commits = atomic.read_json(source / COMMITS)
    row_distinct = row_commit = None
    with tempfile.TemporaryDirectory(prefix=f"swe-bench-costs-{repo}-") as tmp:
        tmp = Path(tmp)
        if "distinct" in parts:
            distinct = distinct_commit(commits)
            work = tmp / "distinct"
            got = stages(synthetic(source, work / "repo", distinct), work, work / "cache", model, knobs,
                         matrix.embed_threads)
            row_distinct = (repo, len(commits), sum(map(len, commits.values())),
                            len(next(iter(distinct.values()))), job_cpu(clone, repo), *got)
            shutil.rmtree(work)
        if "commit" in parts:
            last = sorted(commits)[-1]
            work = tmp / "cold"
            cold = stages(synthetic(source, work / "repo", {last: commits[last]}), work, work / "cache", model, knobs,
                          matrix.embed_threads)
            shutil.rmtree(work)
            work = tmp / "added"
            shutil.copytree(clone / "results" / "cache", work / "cache", ignore=shutil.ignore_patterns("tiktoken"))
            if not (work / "cache" / bases.ROOT).is_dir():  # a run made before builds were kept: keep its, untimed
                stages(source, work / "run", work / "cache", model, knobs, matrix.embed_threads)
            added = stages(synthetic(source, work / "repo", {**commits, **old_files_commit(commits)}), work,
                           work / "cache", model, knobs, matrix.embed_threads)
            row_commit = (repo, len(commits), len(commits[last]), *cold, *added)
    print(row_distinct, row_commit, flush=True)
    return row_distinct, row_commit


def main() -> None:
    p = finished_run.parser("swe_bench_costs.py", __doc__, "swe-bench-costs")
    p.add_argument("--repositories", default="", help="comma-separated: these repositories only (default: all)")
    p.add_argument("--parts", default=",".join(PARTS), help=f"comma-separated, some of {', '.join(PARTS)}")
    args = p.parse_args()
    only, parts = args.repositories, frozenset(args.parts.split(","))
    if not parts <= set(PARTS):
        sys.exit(f"--parts: expected some of {', '.join(PARTS)}, got {', '.join(sorted(parts - set(PARTS)))}")
    clone, note = args.clone.resolve(), args.note
    os.chdir(clone)  # the config's paths (../shared) are relative to the project
    matrix = config.load(clone / CONFIG)
    repos = only.split(",") if only else [n for n, c in matrix.corpora.items() if c.kind == "repository"]
    # two repositories at a time, as the run's jobs shared the 2 cores; the largest first
    repos.sort(key=lambda r: -(clone / "results" / "repos" / r / COMMITS).stat().st_size)
    start = os.getloadavg()[0]
    rows = []
    if parts & {"distinct", "commit"}:
        with concurrent.futures.ProcessPoolExecutor(WORKERS) as pool:
            rows = sorted(pool.map(measure, [clone] * len(repos), repos, [parts] * len(repos)))
    rows_distinct, rows_commit = [d for d, _ in rows if d], [c for _, c in rows if c]
    shape = floors.finished_dag(clone, CONFIG, timing.commit(clone)) if "dag" in parts else None
    end = os.getloadavg()[0]

    lines = [f"# SWE-bench localization: what a commit costs — {datetime.date.today().isoformat()}", "",
             f"The stages whose work should grow with new code — symbol extraction and embedding and indexing "
             f"(`{'`, `'.join(STAGES)}`) — of the cold run `make run CONFIG={CONFIG}` in a clean clone, now at "
             f"{timing.commit(clone)}, and the same stages run again here by `benchmarks/swe_bench_costs.py` "
             f"(parts: {', '.join(p for p in PARTS if p in parts)}) on synthetic commits of the same repositories "
             f"(see its doc). Load average {start:.1f} at the start, {end:.1f} at the end. {note}".rstrip()]
    if rows_distinct:
        lines += distinct_table(rows_distinct)
    if rows_commit:
        lines += commit_table(rows_commit)
    if shape:
        lines += floors.dag_table(shape)
    finished_run.emit(lines, args.out, args.write,
                      "swe-bench-costs" if parts == set(PARTS) else f"swe-bench-costs-{'-'.join(sorted(parts))}")


def distinct_table(rows: list[tuple]) -> list[str]:
    lines = ["", "## The config against its distinct contents (target <= 1.2x)", "",
             "Config: the cold run's jobs of the two stages over every commit; distinct: the same stages, cold, over "
             "one commit holding each distinct (path, blob) once.", "",
             "| repository | commits | file instances | distinct files | config CPU s | distinct CPU s "
             "| distinct wall s | ratio |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for repo, n, instances, files, run_cpu, d_cpu, d_wall in rows:
        lines.append(f"| {repo} | {n} | {instances:,} | {files:,} | {run_cpu:.0f} | {d_cpu:.0f} | {d_wall:.0f} | "
                     f"{run_cpu / d_cpu:.2f}x |")
    total_run, total_distinct = sum(r[4] for r in rows), sum(r[5] for r in rows)
    verdict = "met" if total_run <= 1.2 * total_distinct else "NOT met"
    return lines + [f"| all | | | | {total_run:.0f} | {total_distinct:.0f} | | **{total_run / total_distinct:.2f}x** |",
                    "", f"The whole config: {total_run / total_distinct:.2f}x its distinct contents (<= 1.2x): "
                    f"{verdict}."]


def commit_table(rows: list[tuple]) -> list[str]:
    lines = ["", "## A commit whose files all occurred before (target <= 5 % of a cold commit)", "",
             "Cold commit: the stages over the last commit (sha order) alone, empty caches. Added commit: the stages "
             "over the repository plus one new commit made of files that occurred before, with the run's caches — "
             "what the DAG reruns for it.", "",
             "| repository | commits | files of a commit | cold commit CPU s | wall s | added commit CPU s | wall s "
             "| share |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for repo, n, files, c_cpu, c_wall, a_cpu, a_wall in rows:
        share = a_cpu / c_cpu
        lines.append(f"| {repo} | {n} | {files:,} | {c_cpu:.0f} | {c_wall:.0f} | {a_cpu:.0f} | {a_wall:.0f} | "
                     f"{share:.0%}{'' if share <= 0.05 else ' (> 5 %)'} |")
    return lines


if __name__ == "__main__":
    main()
