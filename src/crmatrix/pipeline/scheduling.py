"""Snakemake's job rate limit, dropped for a local run (the Snakefile's `onstart`).

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
"""

from __future__ import annotations

DEFAULT_LIMIT = (100, 1)  # Snakemake's `--max-jobs-per-timespan` default, 100/1s: (jobs, seconds)


def drop_local_rate_limit(scheduler, local: bool) -> bool:
    """Turn Snakemake's job rate limiter off on `scheduler` (its JobScheduler, once made) when
    the run is `local` and the limit is the default; whether it was turned off."""
    limiter = getattr(scheduler, "job_rate_limiter", None)
    if not local or limiter is None or (limiter.max_jobs, limiter.timespan) != DEFAULT_LIMIT:
        return False
    scheduler.job_rate_limiter = None
    return True
