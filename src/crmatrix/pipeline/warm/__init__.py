"""A warm start for the `light` jobs of a local run: hundreds of short jobs (an evaluation
cell, its statistics), each of which would otherwise start an interpreter and import numpy and
its stage again, about 0.1 s of CPU per job, often more than the job's own work.

The run starts one server (`starter`, from the Snakefile's onstart) that has imported the
light stages' modules once. A light job starts as before (`"$CRMATRIX_PYTHON" SCRIPT ARGS`), but
its script's first act is to hand the job (argv, environment, working directory, umask,
stdin/stdout/stderr) to the server (`client.hand_over`), which forks a process that runs the
script as `python SCRIPT ARGS` would and reports its exit status back (`server`); the hand-over
exits with it. Each job is still its own Snakemake job and its own process; only the start-up
is shared.

A job whose environment is not the server's (another thread count, PYTHONPATH, a conda
environment...) is refused by the server and runs where it started, as it does when no server
runs: a cluster run, `--no-hooks`, CRMATRIX_WARM=0, or a server that failed to start.
"""
