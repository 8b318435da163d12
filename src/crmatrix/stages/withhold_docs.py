"""withhold_docs: a corpus's docs-withheld view (crmatrix.corpora.views), as a tree and its manifest."""

from __future__ import annotations

from pathlib import Path

from crmatrix import atomic
from crmatrix.corpora import views


def run(name: str, src_tree: Path, src_manifest: Path, tree: Path, manifest: Path) -> dict:
    return views.withhold_docs(name, Path(src_tree), atomic.read_json(Path(src_manifest)), Path(tree), Path(manifest))
