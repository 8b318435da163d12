"""`ds1000-library`: DS-1000 problems against a library's own source, the corpus a pinned sdist
(`pypi: pandas==1.5.3`), not a datastore of the gold docs.

The rows are those of format `ds1000` (CodeRAG-Bench's DS-1000 with gold `docs`); a corpus
holds one library, so the dataset keeps that library's problems (by the corpus's package:
numpy → `Numpy`, scikit-learn → `Sklearn`, ...) and drops the others' with one counted
reason. Each gold doc's devdocs title is mapped to the definition it documents
(`crmatrix.datasets.apidocs`: through re-exports and inherited methods), reading the
corpus's tree; a title that maps to no single definition is dropped and counted by reason,
and a problem left with none is dropped. Relevance: a hit on a gold definition (its file,
its name, lines overlapping: gold kind `definitions`). The stratum is the library.
"""

from __future__ import annotations

import re
from pathlib import Path

from crmatrix import CrmatrixError
from crmatrix.datasets.apidocs import Library, Unresolved
from crmatrix.datasets.ds1000 import read_problems, task_id, unasked
from crmatrix.datasets.registry import Loaded, register
from crmatrix.datasets.rows import corpus_repo
from crmatrix.datasets.tasks import Task
from crmatrix.symbols import Symbol

# The PyPI project of each of DS-1000's libraries (its `metadata.library`).
LIBRARIES = {"numpy": "Numpy", "pandas": "Pandas", "scipy": "Scipy", "matplotlib": "Matplotlib",
             "scikit-learn": "Sklearn", "tensorflow": "Tensorflow", "torch": "Pytorch"}


def corpus_library(manifest: dict, corpus: str) -> str:
    """The DS-1000 library a corpus holds, by its pinned package (or its name, less a
    version: a directory `pandas-1.5.3`)."""
    package = re.sub(r"-\d[\w.]*$", "", corpus_repo(manifest, corpus).lower())
    if package not in LIBRARIES:
        raise CrmatrixError(f"corpus {corpus!r}: holds {package!r}, none of DS-1000's libraries "
                            f"({', '.join(LIBRARIES)}): a ds1000-library dataset needs a pypi pin of one")
    return LIBRARIES[package]


def gold_definitions(library: Library, symbols: list[Symbol], titles: list[str]) -> tuple[list, list[tuple]]:
    """The gold spans `[path, name, start, end]` of the titles' definitions (each title's
    definition as the symbols stage extracted it: overloads are one definition), and the
    titles dropped as (reason, detail)."""
    by_def: dict[tuple[str, str, str], list[Symbol]] = {}
    for s in symbols:
        by_def.setdefault((s.path, s.parent, s.name), []).append(s)
    spans, dropped = set(), []
    for title in titles:
        try:
            d = library.resolve(title)
        except Unresolved as e:
            dropped.append((e.reason, e.detail))
            continue
        found = by_def.get((d.path, d.parent, d.name), [])
        if not found:
            dropped.append(("definition not extracted", f"{title}: {d.path} {d.qualname}"))
        spans |= {(s.path, s.name, s.start_line, s.end_line) for s in found}
    return sorted(list(s) for s in spans), dropped


@register("ds1000-library", reads_tree=True)
def load_ds1000_library(path: Path, corpus: str, manifest: dict, symbols: list[Symbol], tree: Path) -> Loaded:
    rows, metas = read_problems(path)
    library_name = corpus_library(manifest, corpus)
    library = Library(Path(tree), [f["path"] for f in manifest.get("files", [])])
    tasks, dropped, seen = [], [], {}
    for i, (row, (meta, docs)) in enumerate(zip(rows, metas, strict=True)):
        if meta["library"] != library_name:
            dropped.append({"row": i, "reason": "another library's problem", "detail": meta["library"]})
            continue
        if drop := unasked(i, row, meta, docs, seen):
            dropped.append(drop)
            continue
        titles = sorted({d["title"] for d in docs})
        spans, unresolved = gold_definitions(library, symbols, titles)
        dropped += [{"row": i, "reason": reason, "detail": detail} for reason, detail in unresolved]
        if not spans:
            dropped.append({"row": i, "reason": "no gold title resolved", "detail": ", ".join(titles)})
            continue
        gold = {"type": "definitions", "ids": titles, "definitions": spans}
        tasks.append(Task(task_id(meta), row["prompt"], "natural_language", gold, corpus, stratum=library_name))
    return Loaded(tasks, dropped)
