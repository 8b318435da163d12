"""grep_baseline: what grep-and-read reads for each task of a dataset, once per dataset.

It depends on the dataset and its corpus only, not on any system or arm, so every
evaluation of the dataset reads it instead of grepping the tree again.
"""

from __future__ import annotations

from pathlib import Path

from crmatrix import atomic
from crmatrix.datasets.tasks import read_tasks
from crmatrix.evaluation import tokenbench
from crmatrix.symbols import read_symbols


def run(*, tasks: Path, tree: Path, manifest: Path, symbols: Path, out: Path) -> dict[str, dict]:
    grep = tokenbench.grep_and_read(Path(tree), atomic.read_json(manifest), read_tasks(tasks), read_symbols(symbols))
    atomic.write_json(Path(out), grep)
    return grep
