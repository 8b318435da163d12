"""The normalized task every dataset format yields, as the dataset stage writes it.

Its own module so that what only reads tasks (splits, the ledger, the matrix's stage) does
not import every format's loader (`crmatrix.datasets` re-exports it).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

from crmatrix.atomic import read_jsonl


@dataclass(frozen=True)
class Task:
    task_id: str
    query: str
    query_type: str
    gold: dict
    corpus: str
    stratum: str = ""  # what splits stratify by: the repo (repoqa, swe-qa) or the library (ds1000)

    def to_dict(self) -> dict:
        return asdict(self)


def read_tasks(path: Path) -> list[Task]:
    """The normalized tasks a dataset stage wrote."""
    return [Task(**d) for d in read_jsonl(path)]
