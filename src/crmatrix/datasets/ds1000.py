"""`ds1000`: DS-1000 problems with CodeRAG-Bench's gold library documentation.

Rows (JSONL or parquet, read through the `datasets` library) are
`{prompt, reference_code, metadata{library, problem_id, ...}, code_context, docs}` where
`docs` lists the gold documents `{function, title, text}`; `title` is the document's id
(`pandas.reference.api.pandas.dataframe.where`). The query is the prompt; the stratum the
library (`Pandas`, `Numpy`, ...), for the per-library breakdown.

Corpus kind `ds1000: {file}` (`write_corpus`) is the docs datastore: every distinct
document of the file's `docs`, one file `{title}.txt` each, whose symbol is the document. A corpus document
is relevant when its id is a gold title or its text matches a gold text with rapidfuzz's
`partial_ratio` >= 85 (the same passage cut or reformatted elsewhere), decided at load time.
Problems without gold docs (about half of DS-1000) are dropped and counted.
"""

from __future__ import annotations

from pathlib import Path

from rapidfuzz import fuzz, process

from crmatrix import CrmatrixError
from crmatrix.datasets.records import read_records
from crmatrix.datasets.registry import Loaded, register
from crmatrix.datasets.rows import check_fields, query_key
from crmatrix.datasets.tasks import Task
from crmatrix.symbols import DOCUMENT_KIND, Symbol

FUZZY_MIN = 85
DOCUMENT_SUFFIX = ".txt"


def ds1000_docs(row, where: str) -> list[dict]:
    """A DS-1000 row's gold documents `{title, text, ...}` (none: an empty list)."""
    docs = row.get("docs") if isinstance(row, dict) else None
    if docs is None:
        return []
    if not isinstance(docs, list):
        raise CrmatrixError(f"{where}: field 'docs' must be a list of {{function, title, text}}")
    for k, d in enumerate(docs):
        for key in ("title", "text"):
            if not isinstance(d, dict) or not isinstance(d.get(key), str) or not d[key].strip():
                raise CrmatrixError(f"{where}: docs[{k}]: field '{key}' must be a non-empty string")
        if "/" in d["title"]:
            raise CrmatrixError(f"{where}: docs[{k}]: title {d['title']!r} is not a document id (it has a '/')")
    return docs


def write_corpus(spec: dict, dest: Path) -> dict:
    """Corpus kind `ds1000: {file}`: every distinct gold document of the file, one
    `{title}.txt` each, in dest (a title's first text in file order); returns where it came from."""
    file = Path(spec["file"])
    texts: dict[str, str] = {}
    for i, row in enumerate(read_records(file)):
        for d in ds1000_docs(row, f"{file}: row {i}"):
            texts.setdefault(d["title"], d["text"])
    if not texts:
        raise CrmatrixError(f"{file}: no row has gold docs to make a datastore of")
    for title, text in texts.items():
        (dest / f"{title}{DOCUMENT_SUFFIX}").write_text(text, encoding="utf-8")
    return {"source": str(file), "documents": len(texts)}


class _Matcher:
    """The corpus documents relevant to each gold document, by id or by fuzzy text."""

    def __init__(self, symbols: list[Symbol], texts: list[str]):
        self.docs = [s for s in symbols if s.kind == DOCUMENT_KIND]
        self.by_id = {s.name: s.path for s in self.docs}
        unique = sorted(set(texts))
        # one C++ pass over every (gold text, document) pair; a score below the cutoff is 0
        scores = process.cdist(unique, [s.body for s in self.docs], scorer=fuzz.partial_ratio,
                               score_cutoff=FUZZY_MIN, workers=1) if unique and self.docs else []
        self.fuzzy = {t: [self.docs[j].path for j in range(len(self.docs)) if scores[i][j] >= FUZZY_MIN]
                      for i, t in enumerate(unique)}

    def __call__(self, title: str, text: str) -> list[str]:
        return sorted({*([self.by_id[title]] if title in self.by_id else []), *self.fuzzy[text]})


def read_problems(path: Path) -> tuple[list[dict], list[tuple[dict, list[dict]]]]:
    """A DS-1000 file's rows, and each row's (metadata, gold docs), checked."""
    rows = read_records(path)
    metas = []
    for i, row in enumerate(rows):
        where = f"{path}: row {i}"
        check_fields(row, where, ("prompt",))
        meta = row.get("metadata")
        if not isinstance(meta, dict) or not isinstance(meta.get("library"), str) \
                or not isinstance(meta.get("problem_id"), int):
            raise CrmatrixError(f"{where}: field 'metadata' must hold 'library' (a string) and 'problem_id' (an int)")
        metas.append((meta, ds1000_docs(row, where)))
    return rows, metas


def unasked(i: int, row: dict, meta: dict, docs: list[dict], seen: dict[str, int]) -> dict | None:
    """Why problem `i` is dropped before its gold is looked for (no gold docs, or its question
    asked by an earlier row), or None; `seen` records each question's first row."""
    if not docs:
        return {"row": i, "reason": "no gold docs", "detail": f"problem {meta['problem_id']}"}
    first = seen.setdefault(query_key(row["prompt"]), i)
    if first != i:
        return {"row": i, "reason": "repeated question", "detail": f"repeats row {first}"}
    return None


def task_id(meta: dict) -> str:
    return f"ds{meta['problem_id']:04d}"


@register("ds1000", corpus_kind="ds1000", write_corpus=write_corpus, documents=True)
def load_ds1000(path: Path, corpus: str, manifest: dict, symbols: list[Symbol]) -> Loaded:
    rows, metas = read_problems(path)
    match = _Matcher(symbols, [d["text"] for _, docs in metas for d in docs])
    if not match.docs:
        raise CrmatrixError(f"{path}: corpus {corpus!r} holds no documents (a ds1000 dataset needs a ds1000 corpus)")
    tasks, dropped, seen = [], [], {}
    for i, (row, (meta, docs)) in enumerate(zip(rows, metas, strict=True)):
        if drop := unasked(i, row, meta, docs, seen):
            dropped.append(drop)
            continue
        documents = sorted({p for d in docs for p in match(d["title"], d["text"])})
        if not documents:
            dropped.append({"row": i, "reason": "no gold doc in the corpus",
                            "detail": ", ".join(d["title"] for d in docs)})
            continue
        gold = {"type": "docs", "ids": sorted({d["title"] for d in docs}), "documents": documents}
        tasks.append(Task(task_id(meta), row["prompt"], "natural_language", gold, corpus,
                          stratum=meta["library"]))
    return Loaded(tasks, dropped)
