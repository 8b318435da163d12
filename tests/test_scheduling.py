"""A local run's scheduler without Snakemake's job rate limit, and each ready job's inputs measured
once (crmatrix.pipeline.scheduling)."""

import asyncio
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

from crmatrix.pipeline import scheduling

SNAKEMAKE = Path(sys.executable).with_name("snakemake")


def limited(max_jobs: int, timespan: int) -> SimpleNamespace:
    return SimpleNamespace(job_rate_limiter=SimpleNamespace(max_jobs=max_jobs, timespan=timespan))


def test_a_local_run_at_the_default_limit_loses_it():
    scheduler = limited(100, 1)
    assert scheduling.drop_local_rate_limit(scheduler, local=True) is True
    assert scheduler.job_rate_limiter is None


def test_a_cluster_run_or_a_limit_the_user_set_keeps_it():
    cluster, chosen = limited(100, 1), limited(5, 1)
    assert scheduling.drop_local_rate_limit(cluster, local=False) is False
    assert scheduling.drop_local_rate_limit(chosen, local=True) is False
    assert (cluster.job_rate_limiter.max_jobs, chosen.job_rate_limiter.max_jobs) == (100, 5)


def test_no_limiter_is_left_alone():
    assert scheduling.drop_local_rate_limit(SimpleNamespace(job_rate_limiter=None), local=True) is False
    assert scheduling.drop_local_rate_limit(SimpleNamespace(), local=True) is False


def test_the_default_is_snakemakes():
    from snakemake.cli import get_argument_parser
    from snakemake.settings.types import MaxJobsPerTimespan

    default = MaxJobsPerTimespan.parse_choice(get_argument_parser().get_default("max_jobs_per_timespan"))
    assert (default.max_jobs, default.timespan) == scheduling.DEFAULT_LIMIT


def test_a_local_snakemake_run_schedules_without_the_limit(tmp_path):
    """The Snakefile's onstart sees the scheduler Snakemake made, and its runs still finish."""
    (tmp_path / "Snakefile").write_text(
        "from crmatrix.pipeline import scheduling\n\n"
        "onstart:\n"
        "    dropped = scheduling.drop_local_rate_limit(workflow.scheduler, workflow.local_exec)\n"
        "    scheduling.measure_inputs_once(workflow.scheduler)\n"
        "    open('dropped.txt', 'w').write(f'{dropped} {workflow.scheduler.job_rate_limiter}')\n\n"
        "rule all:\n    input: expand('twice/{i}.txt', i=range(12))\n\n"
        "rule one:\n    output: 'out/{i}.txt'\n    shell: 'sleep 0.05; touch {output}'\n\n"
        "rule two:\n    input: 'out/{i}.txt'\n    output: 'twice/{i}.txt'\n    shell: 'touch {output}'\n")
    done = subprocess.run([str(SNAKEMAKE), "--cores", "2", "--quiet"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "dropped.txt").read_text() == "True None"
    assert len(list((tmp_path / "twice").glob("*.txt"))) == 12


class Input:
    """An input file as Snakemake's scheduler measures it (`exists`, then `size`), each call counted."""

    def __init__(self, name: str, size: int | None, calls: list[str]):
        self.name, self._size, self.calls = name, size, calls

    async def exists(self) -> bool:
        self.calls.append(self.name)
        return self._size is not None

    async def size(self) -> int:
        return self._size

    def __repr__(self) -> str:
        return self.name


class Job:
    def __init__(self, *inputs: Input):
        self.input = list(inputs)


def test_a_ready_jobs_inputs_are_measured_once_as_snakemake_measures_them():
    from snakemake.scheduling.job_scheduler import JobScheduler

    calls: list[str] = []
    a, b, c = Input("a", 5, calls), Input("b", 7, calls), Input("gone", None, calls)
    first, second = Job(a, b), Job(b, c)
    scheduler = SimpleNamespace(_input_sizes={})
    scheduling.measure_inputs_once(scheduler)
    asyncio.run(scheduler.update_input_sizes([first]))
    assert sorted(calls) == ["a", "b"]
    asyncio.run(scheduler.update_input_sizes([first, second]))  # the next pass: b is known, first measured
    assert sorted(calls) == ["a", "b", "gone"]
    asyncio.run(scheduler.update_input_sizes([first, second]))
    assert len(calls) == 3
    snakemakes = SimpleNamespace(_input_sizes={})
    asyncio.run(JobScheduler.update_input_sizes(snakemakes, [first, second]))
    assert scheduler._input_sizes == snakemakes._input_sizes == {a: 5, b: 7, c: None}


def _checksummed_run(work: Path, hooked: bool) -> tuple[int, dict[str, dict]]:
    """A job of three small inputs and four outputs run by Snakemake, with the hook or without:
    how many files were hashed, and each output's record of its inputs' checksums."""
    import base64
    import json

    for i in range(3):
        (work / f"in{i}.txt").write_text(f"input {i}\n")
    hook = "    scheduling.checksum_inputs_once(workflow.persistence)\n" if hooked else ""
    (work / "Snakefile").write_text(
        "import hashlib\nfrom crmatrix.pipeline import scheduling\n\n"
        "digest = hashlib.file_digest\n\n"
        "def counted(f, algorithm):\n"
        "    open('hashed.txt', 'a').write(f.name + '\\n')\n"
        "    return digest(f, algorithm)\n\n"
        "onstart:\n    hashlib.file_digest = counted\n" + hook + "\n"
        "rule all:\n    input: expand('out/{k}.txt', k=list('abcd'))\n\n"
        "rule four:\n    input: expand('in{i}.txt', i=range(3))\n    output: expand('out/{k}.txt', k=list('abcd'))\n"
        "    shell: 'touch {output}'\n")
    done = subprocess.run([str(SNAKEMAKE), "--cores", "1", "--quiet"], cwd=work, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    records = {}
    for p in (work / ".snakemake" / "metadata").iterdir():
        records[base64.b64decode(p.name).decode()] = json.loads(p.read_text())["input_checksums"]
    return len((work / "hashed.txt").read_text().split()), records


def test_a_finished_jobs_inputs_are_checksummed_once_into_the_records_snakemake_writes(tmp_path):
    import hashlib

    (tmp_path / "hooked").mkdir()
    (tmp_path / "own").mkdir()
    hooked, own = _checksummed_run(tmp_path / "hooked", True), _checksummed_run(tmp_path / "own", False)
    assert (hooked[0], own[0]) == (3, 12)  # each input once, against once per output
    expected = {f"in{i}.txt": "sha256:" + hashlib.sha256(f"input {i}\n".encode()).hexdigest() for i in range(3)}
    assert hooked[1] == own[1] == {f"out/{k}.txt": expected for k in "abcd"}
