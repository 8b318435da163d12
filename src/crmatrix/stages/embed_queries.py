"""embed_queries: a dataset's queries embedded once with one model, for every arm's evaluation.

Its own stage so that no evaluation loads a model, and so that what it runs is the
embedding code alone (no engine edit re-embeds anything).
"""

from __future__ import annotations

from pathlib import Path

from crmatrix.datasets.tasks import read_tasks
from crmatrix.embed import queries


def run(*, tasks: Path, model_dir: Path, cache_dir: Path, out: Path, threads: int | None = None) -> dict:
    return queries.write([t.query for t in read_tasks(Path(tasks))], Path(model_dir), Path(cache_dir), Path(out),
                         threads)
