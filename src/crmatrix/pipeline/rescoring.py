"""Refusing a second scoring on a test split before any job runs (crmatrix.datasets.ledger).

evaluate_arm refuses to score a config the ledger holds before its first query, but by then
Snakemake has removed the run the job was to replace, and the matrix keeps a column whose run
is gone. So the workflow asks here first, once the plan is made and before any job starts
(the Snakefile's `onstart`), for every evaluation it plans on a test split, whatever the
reason it was planned (`--forcerun`, an edited engine, a deleted run). The key is the one the
job computes and its run records (ledger.config_key): the dataset file's sha256, the split,
the system's settings, the arm's variables and the model's sha256. An evaluation whose
dataset rows or model this very run makes anew cannot be keyed before they are made: the
job's own check is left to refuse it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from crmatrix import CrmatrixError, atomic
from crmatrix.datasets import ledger
from crmatrix.embed.models import read_model  # not engine.index: planning loads no search engine


@dataclass(frozen=True)
class Planned:
    """One planned evaluation, as its job gets it (rule evaluate_arm's output, input and params)."""

    run: str  # the run file it writes
    dataset: str
    split: str
    dataset_file: Path
    system_conf: dict
    env: dict
    model_dir: Path | None  # the prepared model of a builtin arm with an index; None: no model in the key


def planned_key(p: Planned, remade: set[Path] = frozenset()) -> str | None:
    """The ledger key the job will check, or None while a file it stands on is yet to be made
    (`remade`: the outputs of the jobs planned with it)."""
    stands_on = [p.dataset_file] + ([p.model_dir] if p.model_dir is not None else [])
    if any(Path(f) in remade or not Path(f).exists() for f in stands_on):
        return None
    model = read_model(p.model_dir) if p.model_dir is not None else None
    return ledger.config_key(atomic.sha256_file(p.dataset_file), p.split, p.system_conf, p.env, model)


def refuse(planned: Iterable[Planned], remade: set[Path], force: bool, path: Path = ledger.PATH) -> None:
    """Raise the ledger's one-line refusal, naming the run, for the first planned test-split
    evaluation (by run file) whose config it holds; nothing when forced."""
    if force:
        return
    for p in sorted(planned, key=lambda p: p.run):
        key = planned_key(p, remade) if ledger.is_test(p.split) else None
        if key is not None:
            try:
                ledger.check(key, p.dataset, p.split, False, path)
            except CrmatrixError as e:
                raise CrmatrixError(f"{p.run}: {e}") from None
