"""Snakemake's scheduler, lightened for the matrix's hundreds of ready jobs (the Snakefile's
`onstart`): no job rate limit in a local run, each ready job's inputs measured once, and each
finished job's inputs checksummed once.


Snakemake 9 limits job submissions to `--max-jobs-per-timespan` (default 100 per 1 s). With
the limit on, each pass of its scheduling loop that finds jobs ready starts a timer to pass
again one timespan later, and each finished job starts a pass of its own: so passes pile up, one
more per finished job, for as long as jobs wait for cores (snakemake/snakemake#3744). The matrix
keeps hundreds of evaluations waiting, so after a few hundred jobs Snakemake held some 300 timer
threads and made as many passes a second, each over every ready job's inputs and resources.
A local run's jobs are bounded by its cores anyway, and a limit meant to spare a cluster's
queue spares nothing here. Measured here: 400 jobs of 0.25 s on 2 cores, Snakemake's CPU
40.0 s with the limit, 7.6 s without; the wall time the same (58.3 against 55.4 s).

A cluster run keeps the limit (its queue is what it protects), and so does a local run given
another limit than the default: a user who set one meant it.

At every pass, Snakemake's scheduler also measures the size of every input of every ready job
(its greedy selection prefers the jobs with the largest inputs), though a ready job's inputs are
finished files that stay as they are until it runs: seven hundred ready cells' statistics were
measured again at each of the seven hundred passes. Measured once per job, Snakemake's own CPU
in forcing the seed matrix's 744 `cell_stats` jobs again went from 20.6 s to 13.5 s; the sizes,
hence the order chosen, are the same.

When a job ends, Snakemake records for each of its outputs the checksum of each of its inputs
under 1 MB (`--max-checksum-file-size`; a later run reads them to tell an input touched from an
input changed), hashing every input again for every output: outputs x inputs hashes, in its own
process, after the job. The latency charts are 9 files drawn from every run's times (the seed's
744): 6,700 hashes where 744 do. A rule that drew 144 charts from 720 cells kept Snakemake busy
for 10 s after its job had ended. Hashed once per job, the records are the same.
"""

from __future__ import annotations

import asyncio
from contextvars import ContextVar

DEFAULT_LIMIT = (100, 1)  # Snakemake's `--max-jobs-per-timespan` default, 100/1s: (jobs, seconds)


def drop_local_rate_limit(scheduler, local: bool) -> bool:
    """Turn Snakemake's job rate limiter off on `scheduler` (its JobScheduler, once made) when
    the run is `local` and the limit is the default; whether it was turned off."""
    limiter = getattr(scheduler, "job_rate_limiter", None)
    if not local or limiter is None or (limiter.max_jobs, limiter.timespan) != DEFAULT_LIMIT:
        return False
    scheduler.job_rate_limiter = None
    return True


def measure_inputs_once(scheduler) -> None:
    """Have `scheduler` (Snakemake's JobScheduler) measure the inputs of each ready job at its
    first pass only, as its own `update_input_sizes` measures them (a missing file: None), into
    the table its selection reads; the table keeps what it measured."""
    sizes, measured = scheduler._input_sizes, set()

    async def update_input_sizes(jobs) -> None:
        fresh = [job for job in jobs if job not in measured]
        measured.update(fresh)
        paths = {path for job in fresh for path in job.input if path not in sizes}
        if paths:
            sizes.update(await asyncio.gather(*map(_size, paths)))

    scheduler.update_input_sizes = update_input_sizes


async def _size(path) -> tuple:
    return path, await path.size() if await path.exists() else None


def checksum_inputs_once(persistence) -> None:
    """Have Snakemake's `persistence` (the workflow's) checksum a finished job's inputs once for
    all its outputs' records, each as Snakemake's own `checksum` computes it."""
    original = persistence.finished

    async def finished(job) -> None:
        for path in job.input:
            _memoize_checksum(type(path))
        token = _checksums.set({})  # this job's, in its own task's context: no other job sees it
        try:
            await original(job)
        finally:
            _checksums.reset(token)

    persistence.finished = finished


# a finished job's checksums by (file, arguments), while its records are written; None elsewhere
_checksums: ContextVar[dict | None] = ContextVar("crmatrix_checksums", default=None)


def _memoize_checksum(cls) -> None:
    """Make `cls.checksum` (Snakemake's input file class) answer from `_checksums` when it is set."""
    original = cls.checksum
    if getattr(original, "memoized", False):
        return

    async def checksum(self, threshold=None, force=False, algorithm=None):
        memo = _checksums.get()
        if memo is None:
            return await original(self, threshold, force, algorithm)
        key = (self.file, threshold, force, algorithm)
        if key not in memo:
            memo[key] = await original(self, threshold, force, algorithm)
        return memo[key]

    checksum.memoized = True
    cls.checksum = checksum
