"""One evaluation as its plan names it (`crmatrix.config.plan.Plan.cell`): the one argument
of `crmatrix.stages.evaluate_arm.run`, from the workflow or from `crmatrix run`."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property

from crmatrix import CrmatrixError
from crmatrix.config.settings import JobSpec

# The parameters of an evaluation: what its result depends on besides its input files (and the
# dataset file's sha256: Snakemake sees a file's mtime, never its bytes).
PARAMS = ("system_conf", "env", "knobs", "top_k", "split", "home_dir", "dataset_sha256")


@dataclass(frozen=True)
class CellJob:
    """One evaluation (dataset × system × arm) as `stages.evaluate_arm.run` takes it: the files
    it reads (`inputs`: tasks, grep, dataset_file, tree, manifest, symbols; and as the system
    and arm need them index, model, query_vectors, graph, venv, system_models), the other
    arguments its result depends on (`params`: PARAMS), and where it writes (`outputs`: run,
    trec_dir). The workflow's rule evaluate_arm has an input, param and output of each name."""

    dataset: str
    system: str
    arm: str
    inputs: dict[str, str | list[str]]
    params: dict
    outputs: dict[str, str]

    @cached_property
    def spec(self) -> JobSpec:
        """What its params carry, typed: the system's settings and the arm's parsed knobs."""
        p = self.params
        return JobSpec.of(p["system_conf"], p["env"], p.get("knobs"), f"systems.{self.system}")

    def name(self) -> str:
        return job_name(self.spec.system.type, self.system, self.dataset, self.arm)


def job_name(system_type: str, system: str, dataset: str, arm: str | None = None) -> str:
    """What an evaluation job ran, as its error names it: `mcp system 'search' on dataset 'flask', arm 'baseline'`."""
    return f"{system_type} system {system!r} on dataset {dataset!r}{f', arm {arm!r}' if arm else ''}"


@contextlib.contextmanager
def named_errors(name: str) -> Iterator[None]:
    """A user error raised inside, its message led by `name` (job_name): the one line a failed
    job shows says which system it ran on which dataset, whichever part of it stopped."""
    try:
        yield
    except CrmatrixError as e:
        raise CrmatrixError(f"{name}: {e}") from None
