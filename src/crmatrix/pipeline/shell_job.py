"""A job its rule starts as plain Python (`shell:` with the workflow's `light` command), not
through Snakemake's `script:`: that preamble unpickles the job, which imports Snakemake in every
job's process, 0.08-0.14 s of its CPU, more than a cell's statistics take. The rule hands the
job over as three arguments, from its params: its log, its files and wildcards (`files`, derived
from its input and output, as Snakemake sees them), and its other parameters (`parameters`, a
param of their own, which Snakemake's params trigger compares with the last run's: a param
derived from the files it leaves out). Its script reads them back (`read`)."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class ShellJob:
    """One job as its script sees it: its log, its named inputs and outputs (an input may be a
    list of files), every output in order (`files`: what a failure prunes), wildcards and the
    rule's other parameters."""

    log: str
    input: dict[str, str | list[str]]
    output: dict[str, str]
    files: list[str]
    wildcards: dict[str, str]
    params: dict


def files(input: dict, output: dict, every_output: Sequence[str], wildcards: dict) -> str:
    """A job's files and wildcards as its JSON argument."""
    return _json({"input": input, "output": output, "files": list(every_output), "wildcards": wildcards})


def parameters(params: dict) -> str:
    """A job's other parameters as its JSON argument: keys sorted, so the same parameters are
    always the same text, and Snakemake's params trigger sees no change where there is none."""
    return _json(params)


def _json(value) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def read(argv: Sequence[str] = sys.argv) -> ShellJob:
    """The job its command line hands over: `SCRIPT LOG FILES PARAMETERS`."""
    if len(argv) != 4:
        sys.exit(f"crmatrix: {argv[0]} takes a job's log, its files and its parameters (JSON), as its rule's "
                 "shell command passes them")
    return ShellJob(log=argv[1], **json.loads(argv[2]), params=json.loads(argv[3]))
