"""A SWE-bench slice on a real Slurm (tests/real_slurm.py, as test_slurm_real has it): the flask and
requests tasks of SWE-bench Lite (config/swe-bench.yaml cut down to those two repositories, two
arms and the hybrid and bm25 methods; needs ../shared) through profiles/slurm. The profile's job
groups send the 12 jobs Slurm runs as 7 sbatch jobs, each asking for what its jobs need together
(the embedding jobs for their threads, though Snakemake is run with --cores 1), and the phase
matrix and the runs (timings aside) are those of a run on this host. About 7 minutes on 2 cores:
run by hand (CRMATRIX_BY_HAND=1), not by `make test`."""

import json
from pathlib import Path

import pytest
import real_slurm
import yaml
from conftest import ROOT, SHARED, by_hand, needs_shared
from test_cluster import group_jobs, job_counts
from test_slurm_real import SLURM_PROFILE, asked, finish, results, slurm, start  # noqa: F401 (slurm: the fixture)

UNAVAILABLE = real_slurm.unavailable()
pytestmark = [pytest.mark.slow, by_hand, needs_shared,
              pytest.mark.skipif(UNAVAILABLE is not None, reason=UNAVAILABLE or "")]

REPOSITORIES = ("flask", "requests")  # SWE-bench Lite: 3 and 6 tasks, each at its own commit
ARMS = ("baseline", "2e-only")  # the seed's query-time arm beside the baseline: one index serves both
# The jobs Snakemake sends to Slurm: per repository its symbols and its index; per dataset (one
# per repository: lite-flask, lite-requests) its tasks and query vectors; one run per dataset and arm.
REMOTE = {"extract_repository": 2, "build_repository_index": 2, "localize_tasks": 2, "embed_queries": 2,
          "evaluate_arm": 4}
# Those in the profile's groups: a dataset's tasks with its query vectors, and the 4 runs in one job.
GROUPS = sorted([("dataset_embed_queries_localize_tasks", ("embed_queries", "localize_tasks"))] * 2
                + [("evaluate_evaluate_arm", ("evaluate_arm",) * 4)])
# The embedding jobs' threads, and so their CPUs: the slice's own, not config/swe-bench.yaml's
# (1 there, so that the full matrix's index jobs run two at a time on 2 cores), so that Slurm's
# --cpus-per-task shows an embedding job asking for its threads rather than for 1.
EMBED_THREADS = 2
# Snakemake submits as from a login node of 1 CPU (`--cores all` there): --cores 1, which caps each
# job's threads at 1 and has a group's jobs run one at a time. (The last --cores given counts.)
SLICE_PROFILE = (*SLURM_PROFILE, "--cores", "1")
# Each Slurm job by name (a group job's: the group's, then its rules), what it asks for, and its
# partition. The repositories' jobs go alone with their rules' own resources (build_repository_index:
# its EMBED_THREADS CPUs, whatever --cores); a dataset's group asks for the most of its two jobs
# (localize_tasks 1 CPU, 2048 MB, 30 minutes, then embed_queries EMBED_THREADS CPUs, 2048 MB, 20)
# and the sum of their runtimes; the evaluations run one at a time (1 CPU, 2048 MB and 40 minutes
# each), so four times their time.
SUBMITTED = {
    "extract_repository": ("--cpus-per-task=1 --mem=6144 --time=120", "main"),
    "build_repository_index": (f"--cpus-per-task={EMBED_THREADS} --mem=6144 --time=240", "main"),
    "dataset_embed_queries_localize_tasks": (f"--cpus-per-task={EMBED_THREADS} --mem=2048 --time=50", "short"),
    "evaluate_evaluate_arm": ("--cpus-per-task=1 --mem=2048 --time=160", "short"),
}
SLURM_JOBS = sorted(["extract_repository", "build_repository_index", "dataset_embed_queries_localize_tasks"] * 2
                    + ["evaluate_evaluate_arm"])


def write_slice(work: Path) -> Path:
    """The slice's config in the new directory `work`, from config/swe-bench.yaml: its model, its
    repositories' entries and the arms' settings as they are there, the files it reads under
    ../shared by their absolute paths; its own EMBED_THREADS."""
    cfg = yaml.safe_load((ROOT / "config" / "swe-bench.yaml").read_text())
    cfg["embed_threads"] = EMBED_THREADS
    cfg["git_mirrors"] = [str(SHARED / "corpora")]
    cfg["repositories"] = {name: cfg["repositories"][name] for name in REPOSITORIES}
    cfg["datasets"] = {"lite": {**cfg["datasets"]["lite"], "file": str(SHARED / "data/swe-bench/lite.jsonl")}}
    cfg["systems"]["builtin"]["methods"] = ["hybrid", "bm25"]
    cfg["arms"] = {arm: cfg["arms"][arm] for arm in ARMS}
    work.mkdir(parents=True)
    (work / "config.yaml").write_text(yaml.safe_dump(cfg))
    return work


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> tuple[dict, dict]:
    """The slice run on this host, before the cluster starts (a test's fixtures are made in order):
    two runs at once would share the 2 CPUs."""
    work = write_slice(tmp_path_factory.mktemp("swe-bench-local") / "work")
    code, out = finish(start(work, "--cores", "2", "all"))
    assert code == 0, out[-3000:]
    return results(work)


def test_a_swe_bench_slice_runs_on_slurm_in_group_jobs(reference, slurm, tmp_path):  # noqa: F811
    work = write_slice(tmp_path / "work")
    code, out = finish(start(work, *SLICE_PROFILE, "all", env=slurm.env))
    assert code == 0, out[-3000:]
    assert results(work) == reference
    # what was compared is the benchmark: its 9 tasks pooled, each arm's Acc@k
    matrix = json.loads((work / "results/matrix/phase-matrix.json").read_text())
    [pooled] = matrix["pooled_benchmarks"]
    assert (pooled["benchmark"], pooled["n"], sorted(pooled["arms"])) == ("lite", 9, sorted(ARMS))
    assert {"acc_all@1", "acc_all@5"} <= set(pooled["arms"]["baseline"])

    # Snakemake sent 12 jobs, 8 of them in 3 group jobs; Slurm ran 7 jobs in all
    assert {rule: n for (kind, rule), n in job_counts(out).items() if kind == "rule"} == REMOTE
    assert group_jobs(out) == GROUPS
    jobs = slurm.jobs(work)
    # the plugin gives the rule in the comment, rule_<rule>_wildcards_<values>, a group job's as rule_<name>
    names = [job["Comment"].removeprefix("rule_").split("_wildcards_")[0] for job in jobs]
    assert sorted(names) == SLURM_JOBS
    assert len(jobs) < sum(REMOTE.values())
    assert {(name, (asked(job), job["Partition"])) for name, job in zip(names, jobs, strict=True)} \
        == set(SUBMITTED.items())
    assert {job["JobState"] for job in jobs} == {"COMPLETED"}
