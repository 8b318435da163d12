"""The cluster profiles: the tiny matrix of test_workflow through the cluster-generic executor
with the shipped profile and status script, on a fake Slurm (tests/fakes/slurm: sbatch runs
the job script in the background, sacct answers from its process and exit code), its jobs
sent in the profile's job groups, the slurm and kubernetes profiles linted and dry-run, and the
embedding jobs asking both Slurm profiles for the threads they run."""

import importlib.util
import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from conftest import ROOT, by_hand, snakemake_cmd
from test_swebench_workflow import URL, bundle, row
from test_workflow import PATH_CORPUS, PATH_DATASET, matrix  # noqa: F401 (the fixture)

PROFILES = ROOT / "profiles"
FAKE_SLURM = ROOT / "tests" / "fakes" / "slurm"
STATUS = PROFILES / "cluster-generic" / "status-sacct.sh"
# The tiny matrix's jobs: the ones a scheduler gets, and the local rules that run beside Snakemake.
REMOTE = {"extract_symbols": 2, "prepare_dataset": 2, "grep_baseline": 2, "evaluate_arm": 4}
LOCAL = {"fetch_corpus": 2, "audit_dataset": 2, "cell_stats": 4, "collect_matrix": 1, "gate_candidates": 1,
         "plot_rows": 1, "plot_forest": 1, "plot_heatmap": 1, "plot_latency": 1,
         "plot_leaderboard": 1, "plot_costs": 1, "plot_runtime": 1, "plot_gallery": 1, "all": 1}
# The remote jobs as the profiles' job groups send them: each group job by its name (the group's,
# then its rules) with the rules of its jobs. A corpus's symbols go alone (no graph here), a
# dataset's tasks with its grep baseline, and the 4 evaluations, each a component of its own, as
# one job (group-components: up to 8).
GROUPS = sorted([("symbols_extract_symbols", ("extract_symbols",))] * 2
                + [("dataset_grep_baseline_prepare_dataset", ("grep_baseline", "prepare_dataset"))] * 2
                + [("evaluate_evaluate_arm", ("evaluate_arm",) * 4)])
# What each group job asks for with the profiles' cores (4): the CPUs and memory of its jobs that
# run side by side, the sum of the runtimes of those that run one after the other. A rule's own:
# extract_symbols 1 CPU, 1024 MB, 20 minutes; prepare_dataset and grep_baseline 1, 1024, 10;
# evaluate_arm 1, 2048 and the default budget_s of 1800 s as 30 minutes, plus 10 for loading.
SUBMITTED = {"symbols_extract_symbols": "--cpus-per-task=1 --mem=1024 --time=20",
             "dataset_grep_baseline_prepare_dataset": "--cpus-per-task=1 --mem=1024 --time=20",
             "evaluate_evaluate_arm": "--cpus-per-task=4 --mem=8192 --time=40"}


def fake_slurm_env(state: Path) -> dict:
    state.mkdir(exist_ok=True)
    return {**os.environ, "PATH": f"{FAKE_SLURM}:{os.environ['PATH']}", "FAKE_SLURM_DIR": str(state)}


def smk(work: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*snakemake_cmd(work), "--configfile", str(work / "config.yaml"), *args],
                          capture_output=True, text=True, timeout=600, env=env)


def job_counts(out: str) -> dict[str, int]:
    """Snakemake's job announcements: 'rule X:' for a submitted job (alone, or indented in a
    group job's), 'localrule X:' for a local one."""
    counts: dict[str, int] = {}
    for kind, name in re.findall(r"^(?: {4})?(localrule|rule) (\w+):$", out, flags=re.M):
        key = (kind, name)
        counts[key] = counts.get(key, 0) + 1
    return counts


def group_jobs(out: str) -> list[tuple[str, tuple[str, ...]]]:
    """Snakemake's group job announcements: the job's name, as a scheduler gets it (the group's,
    then its rules), with the rule of each of its jobs."""
    jobs = []
    for group, body in re.findall(r"Group job (\w+) \(jobs in lexicogr\. order\):\n\n((?: {4}.*\n)+)", out):
        rules = tuple(re.findall(r"^ {4}rule (\w+):$", body, flags=re.M))
        jobs.append(("_".join([group, *sorted(set(rules))]), rules))
    return sorted(jobs)


def submissions(state: Path) -> list[tuple[str, str, str]]:
    """(job id, job name, resource flags) per line of the fake sbatch's log."""
    out = []
    for line in (state / "submissions.log").read_text().splitlines():
        m = re.fullmatch(r"(\d+) --parsable --job-name=crmatrix-(\w+) (--cpus-per-task=\S+ --mem=\S+ --time=\S+) "
                         r"--output=logs/cluster/%j\.log \S+/snakejob\.\2\.[\w-]+\.sh", line)
        assert m, line
        out.append(m.groups())
    return out


@pytest.mark.slow
def test_the_matrix_runs_through_the_cluster_generic_profile(matrix, tmp_path):  # noqa: F811
    work, _ = matrix
    state = tmp_path / "slurm"
    proc = smk(work, "--profile", str(PROFILES / "cluster-generic"), "--seconds-between-status-checks", "1", "all",
               env=fake_slurm_env(state))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    md = (work / "results/matrix/phase-matrix.md").read_text()
    assert "| gitds | builtin | lexical | python | 3 | " in md
    assert "| pathds | builtin | lexical | javascript | 2 | " in md

    # every job that is not a local rule went through sbatch in its group's job, which asked for
    # what its jobs need together
    counts = job_counts(proc.stdout + proc.stderr)
    assert counts == {**{("rule", r): n for r, n in REMOTE.items()}, **{("localrule", r): n for r, n in LOCAL.items()}}
    assert group_jobs(proc.stdout + proc.stderr) == GROUPS
    subs = submissions(state)
    assert sorted(name for _, name, _ in subs) == [name for name, _ in GROUPS]
    assert {name: flags for _, name, flags in subs} == SUBMITTED
    # each ran its jobs to the end with exit code 0 (on the node, as local jobs of the Snakemake
    # there), its output in logs/cluster/<id>.log as --output said
    members = dict(GROUPS)
    for job_id, name, _ in subs:
        assert (state / f"{job_id}.rc").read_text() == "0\n"
        log = (work / f"logs/cluster/{job_id}.log").read_text()
        assert sorted(re.findall(r"^localrule (\w+):$", log, flags=re.M)) == sorted(members[name])

    assert "Nothing to be done" in smk(work, "--cores", "1", "-n", "all").stdout


@pytest.mark.slow
@by_hand
def test_a_job_that_fails_on_the_cluster_fails_the_run(matrix, tmp_path):  # noqa: F811
    """The status script says `failed` for a job whose script exited non-zero: Snakemake stops
    and shows the job's log, instead of waiting for it."""
    work, _ = matrix
    (work / "ds" / "gitds.json").write_text('[{"query": "x", "expected_symbol": "nowhere", '
                                            '"expected_file_suffix": "pkg/core.py"}]')
    state = tmp_path / "slurm"
    proc = smk(work, "--profile", str(PROFILES / "cluster-generic"), "--seconds-between-status-checks", "1",
               "results/datasets/gitds.jsonl", env=fake_slurm_env(state))
    assert proc.returncode != 0
    line = ("crmatrix: ds/gitds.json: row 0: field 'expected_symbol' 'nowhere' is not a symbol of pkg/core.py "
            "(it has 3: Store, parse_config, save)")
    assert (work / "logs/prepare_dataset/gitds.log").read_text().strip() == line
    assert line in proc.stdout + proc.stderr  # show-failed-logs
    # the dataset's group job holds prepare_dataset alone: the target needs no grep baseline
    jobs = {name: (state / f"{i}.rc").read_text() for i, name, _ in submissions(state)}
    assert jobs == {"symbols_extract_symbols": "0\n", "dataset_prepare_dataset": "1\n"}
    # the status script names the job and gives the scheduler's state and reason, beside Snakemake's error
    failed = next(i for i, name, _ in submissions(state) if name == "dataset_prepare_dataset")
    assert (f"status-sacct.sh: Slurm job {failed} (crmatrix-dataset_prepare_dataset) ended FAILED, reason "
            "NonZeroExitCode" in proc.stderr.splitlines())
    assert not (work / "results/datasets/gitds.jsonl").exists()


# sacct and squeue answering one line; squeue, like Slurm's, lists a job that has ended only
# when asked for every state (-t all)
FAKE_QUERY = {"sacct": """#!/bin/sh
echo '{line}' | grep .
exit 0
""", "squeue": """#!/bin/sh
case '{line}' in PENDING*|RUNNING*) ;; *) case " $* " in *" -t all "*) ;; *) exit 0 ;; esac ;; esac
echo '{line}' | grep .
exit 0
"""}


@pytest.mark.parametrize(("sacct", "squeue", "answer", "said"), [
    ("COMPLETED|None|crmatrix-x", "", "success", ""),
    ("PENDING|Priority|crmatrix-x", "", "running", ""),
    ("RUNNING|None|crmatrix-x", "", "running", ""),
    ("CANCELLED by 1000|None|crmatrix-x", "", "failed", "ended CANCELLED by 1000, reason None"),
    ("TIMEOUT|TimeLimit|crmatrix-x", "", "failed", "ended TIMEOUT, reason TimeLimit"),
    ("OUT_OF_MEMORY|OutOfMemory|crmatrix-x", "", "failed", "ended OUT_OF_MEMORY, reason OutOfMemory"),
    # Slurm 22.05 without cgroups, a job killed over its --mem (JobAcctGatherParams=OverMemoryKill)
    ("FAILED|JobLaunchFailure|crmatrix-x", "", "failed", "ended FAILED, reason JobLaunchFailure"),
    ("", "PENDING|Priority|crmatrix-x", "running", ""),  # not in the accounting yet, but queued
    # no accounting (sacct fails), but the controller still holds the finished job
    ("", "COMPLETED|None|crmatrix-x", "success", ""),
    ("", "FAILED|NonZeroExitCode|crmatrix-x", "failed", "ended FAILED, reason NonZeroExitCode"),
    ("", "", "failed", "neither sacct nor squeue knows Slurm job 1234"),
])
def test_the_status_script_reads_slurm_states(tmp_path, sacct, squeue, answer, said):
    """One word on stdout for Snakemake; for a failed job one line on stderr with Slurm's state and reason."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, text in (("sacct", sacct), ("squeue", squeue)):
        (bin_dir / name).write_text(FAKE_QUERY[name].format(line=text))
        (bin_dir / name).chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    proc = subprocess.run([str(STATUS), "1234;cluster"], capture_output=True, text=True, env=env, timeout=30)
    assert (proc.returncode, proc.stdout) == (0, answer + "\n")
    if said.startswith("ended"):
        said = f"Slurm job 1234 (crmatrix-x) {said}"
    assert proc.stderr == (f"status-sacct.sh: {said}\n" if said else "")


def planned(out: str) -> dict[str, int]:
    """The dry run's job stats table."""
    table = out.split("Job stats:", 1)[1].split("total", 1)[0]
    return {name: int(n) for name, n in re.findall(r"^(\w+)\s+(\d+)$", table, flags=re.M)}


PLANNED = {**REMOTE, **LOCAL}


def lint_and_dry_run(work: Path, profile: str, *extra: str) -> str:
    lint = smk(work, "--profile", str(PROFILES / profile), *extra, "--lint")
    assert lint.returncode == 0 and "Congratulations, your workflow is in a good condition!" in lint.stderr, \
        lint.stdout + lint.stderr
    dry = smk(work, "--profile", str(PROFILES / profile), *extra, "-n", "all")
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert planned(dry.stdout) == PLANNED
    return dry.stdout


def test_the_slurm_profile_lints_and_plans_the_matrix(matrix):  # noqa: F811
    work, _ = matrix
    out = lint_and_dry_run(work, "slurm")
    assert group_jobs(out) == GROUPS
    # set-resources puts the short jobs on the short partition (a group's jobs all on one);
    # runtime and memory are the rules'
    jobs = re.findall(r"^( *)rule (\w+):\n(?:\1    .*\n)*?\1    resources: (.*)$", out, flags=re.M)
    jobs = [(rule, res) for _, rule, res in jobs]
    resources = {rule: dict(kv.split("=", 1) for kv in res.split(", ")) for rule, res in jobs}
    assert {r: (v["slurm_partition"], v["mem_mb"], v["runtime"]) for r, v in resources.items() if r in REMOTE} == {
        "extract_symbols": ("short", "1024", "20"), "prepare_dataset": ("short", "1024", "10"),
        "grep_baseline": ("short", "1024", "10"), "evaluate_arm": ("short", "2048", "40")}
    assert resources["collect_matrix"]["slurm_partition"] == "main"


@pytest.mark.skipif(importlib.util.find_spec("snakemake_storage_plugin_fs") is None,
                    reason="snakemake-storage-plugin-fs is not installed (pip install -e '.[test]'): the kubernetes "
                           "executor assumes no shared filesystem, so Snakemake refuses even a dry run or a lint of "
                           "its profile without the storage provider the profile names")
def test_the_kubernetes_profile_lints_and_plans_the_matrix(matrix, tmp_path):  # noqa: F811
    """A dry run needs no cluster (the executor is not started), but the storage: the dataset
    files are inputs read from it, as the profile's comment says."""
    work, _ = matrix
    store = tmp_path / "store"
    shutil.copytree(work / "ds", store / "ds")
    lint_and_dry_run(work, "kubernetes", "--default-storage-prefix", str(store))


# The rules that embed: each runs embed_threads threads (params, so that its vectors are the same
# whatever --cores), and asks a cluster for them. The dry run's plan has one of each.
EMBEDDING = {"build_index": 1, "build_repository_index": 1, "embed_queries": 2}


def embedding_matrix(tmp: Path) -> Path:
    """A directory corpus (build_index) and a SWE-bench repository (build_repository_index), each
    with its dataset (embed_queries), the hybrid method, embed_threads at its default, 2."""
    mirror, (commit, _) = bundle(tmp)
    work = tmp / "work"
    for rel, text in PATH_CORPUS.items():
        (work / "local" / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / "local" / rel).write_text(text)
    (work / "pathds.json").write_text(json.dumps(PATH_DATASET))
    (work / "sb.jsonl").write_text(json.dumps(row("acme__widget-1", "acme/widget", commit, "x")) + "\n")
    (work / "config.yaml").write_text(yaml.safe_dump({
        "git_mirrors": [str(mirror)], "repositories": {"widget": {"git": URL}}, "corpora": {"pathc": {"path": "local"}},
        "datasets": {"sb": {"format": "swe-bench", "file": "sb.jsonl"},
                     "pathds": {"file": "pathds.json", "corpus": "pathc"}},
        "systems": {"builtin": {"type": "builtin", "methods": ["hybrid"]}}, "arms": {"baseline": {}}}))
    return work


def cpus_asked(profile: str, threads: int, resources: dict) -> int:
    """The --cpus-per-task a job's sbatch gets: the slurm plugin's own reckoning (cpus_per_task,
    else the job's threads); what the cluster-generic profile's sbatch line names."""
    if profile == "slurm":
        from snakemake_executor_plugin_slurm.partitions import get_job_cpu_requirement

        return get_job_cpu_requirement(SimpleNamespace(threads=threads, resources=resources))[0]
    line = yaml.safe_load((PROFILES / profile / "config.yaml").read_text())["cluster-generic-submit-cmd"]
    field = re.search(r"--cpus-per-task=\{([\w.]+)\}", line)[1]
    return threads if field == "threads" else int(resources[field.removeprefix("resources.")])


@pytest.mark.parametrize("profile", ["slurm", "cluster-generic"])
def test_an_embedding_job_asks_for_its_threads_whatever_the_cores(tmp_path, profile):
    """--cores caps each rule's threads, on a cluster too: from a host at --cores 1 (or `--cores
    all` on a login node of 1 CPU) Snakemake gives the embedding jobs 1 thread, and a request by
    threads would put the job's 2 threads on 1 CPU. The profiles ask for cpus_per_task: a job's
    threads, but an embedding rule's embed_threads."""
    work = embedding_matrix(tmp_path)
    dry = smk(work, "--profile", str(PROFILES / profile), "--cores", "1", "-n", "all")
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert {rule: n for rule, n in planned(dry.stdout).items() if rule in EMBEDDING} == EMBEDDING
    asked: dict[str, set[tuple[int, int]]] = {}  # rule: its jobs' (threads, CPUs asked for)
    for _, rule, lines, res in re.findall(r"^( *)rule (\w+):\n((?:\1    .*\n)*?)\1    resources: (.*)$",
                                          dry.stdout, flags=re.M):
        threads = int(m[1]) if (m := re.search(r"^ *threads: (\d+)$", lines, flags=re.M)) else 1
        asked.setdefault(rule, set()).add((threads, cpus_asked(profile, threads, dict(
            kv.split("=", 1) for kv in res.split(", ")))))
    # the plan's jobs for the cluster: the embedding ones ask for 2 CPUs, given 1 thread; the others for their 1
    remote = {**{rule: {(1, 2)} for rule in EMBEDDING},
              **{rule: {(1, 1)} for rule in ("extract_symbols", "extract_repository", "prepare_dataset",
                                             "localize_tasks", "grep_baseline", "evaluate_arm")}}
    assert {rule: asked.get(rule) for rule in remote} == remote
