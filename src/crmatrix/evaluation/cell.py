"""One evaluation as its plan names it (`crmatrix.config.plan.Plan.cell`): the one argument
of `crmatrix.stages.evaluate_arm.run`, from the workflow or from `crmatrix run`."""

from __future__ import annotations

from dataclasses import dataclass

# The parameters of an evaluation: what its result depends on besides its input files (and the
# dataset file's sha256: Snakemake sees a file's mtime, never its bytes).
PARAMS = ("system_conf", "env", "top_k", "split", "home_dir", "dataset_sha256")


@dataclass(frozen=True)
class Cell:
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
