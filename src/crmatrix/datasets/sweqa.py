"""`swe-qa` and `swe-qa-pro`: repository questions whose reference answers cite files.

SWE-QA (peng-weihan/SWE-QA-Bench) rows are `{question, answer}`, one file per repository;
SWE-QA-Pro (TIGER-Lab/SWE-QA-Pro-Bench) rows add `repo`, `commit_id`, `cluster` and
`qa_type` (what / where / why / how) and mix repositories in one file, so its rows of
another repository or commit than the corpus's pin are dropped (counted). The answers cite
files in prose: `src/flask/json/provider.py`, `blueprints.py: line 172`, `./tests/test_cli.py`
(backticked or not). Each citation is resolved against the pinned tree as indexed: the
exact path, else the one file ending with `/cited`, else the one file of that basename;
one that matches several files (`app.py` in flask is `src/flask/app.py` and
`src/flask/sansio/app.py`) or none is dropped and counted, and so is a question left with
no resolved citation. Gold is the set of resolved files (`file_set`): a system is scored
on the files of its hits, each file at its first hit's rank.

A path-shaped word counts as a citation when its extension is that of a file in the tree,
so `app.json` (an attribute) is a citation of no file: it is dropped as absent, visibly,
rather than guessed away.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

from crmatrix.datasets.records import is_hub, read_records
from crmatrix.datasets.registry import Loaded, register
from crmatrix.datasets.rows import check_fields, corpus_repo, query_key
from crmatrix.datasets.tasks import Task
from crmatrix.symbols import Symbol

_CITATION = re.compile(
    r"(?<![\w/.-])(?P<path>(?:\.{1,2}/)?(?:[\w.-]+/)*[\w-][\w.-]*\.(?P<ext>[A-Za-z0-9]{1,8}))(?![\w/-])"
    r"(?::\s*lines?\s+(?P<start>\d+)(?:\s*[-–]\s*(?P<end>\d+))?)?"
)


def citations(text: str, extensions: set[str]) -> list[dict]:
    """Path-shaped words of `text` with a known extension, first appearance first, each once;
    `lines` when written `path: line N-M`."""
    out: dict[str, dict] = {}
    for m in _CITATION.finditer(text):
        if m["ext"].lower() not in extensions:
            continue
        cited = m["path"].rstrip(".")
        lines = [int(m["start"]), int(m["end"] or m["start"])] if m["start"] else None
        entry = out.setdefault(cited, {"cited": cited, "lines": None})
        entry["lines"] = entry["lines"] or lines
    return list(out.values())


def resolve(cited: str, paths: list[str]) -> tuple[str | None, list[str]]:
    """The one file `cited` names (exact path, unique suffix, unique basename) and, when it
    names none or several, the candidates (empty: absent)."""
    rel = re.sub(r"^(\.{1,2}/)+", "", cited)
    if rel in paths:
        return rel, [rel]
    by_suffix = [p for p in paths if p.endswith("/" + rel)]
    if by_suffix:
        return (by_suffix[0] if len(by_suffix) == 1 else None), by_suffix
    base = PurePosixPath(rel).name
    by_name = [p for p in paths if PurePosixPath(p).name == base]
    return (by_name[0] if len(by_name) == 1 else None), by_name


def _same_repo(row_repo: str, ours: str) -> bool:
    a, b = row_repo.strip().lower().removesuffix(".git"), ours.lower()
    return a == b or a.rsplit("/", 1)[-1] == b.rsplit("/", 1)[-1]


def _load(path: Path, corpus: str, manifest: dict, pro: bool) -> Loaded:
    rows = read_records(path)
    paths = [f["path"] for f in manifest["files"]]
    extensions = {PurePosixPath(p).suffix.lstrip(".").lower() for p in paths} - {""}
    repo = corpus_repo(manifest, corpus)
    commit = manifest.get("pin", {}).get("commit", "")
    tasks, dropped, seen = [], [], {}
    where_file = path if is_hub(path) else Path(path)
    for i, row in enumerate(rows):
        where = f"{where_file}: row {i}"
        check_fields(row, where, ("question", "answer", *(("repo",) if pro else ())))

        def drop(reason: str, detail: str, i: int = i) -> None:
            dropped.append({"row": i, "reason": reason, "detail": detail})

        if pro and not _same_repo(row["repo"], repo):
            drop("other repository", f"{row['repo']} (the corpus is {repo})")
            continue
        row_commit = str(row.get("commit_id") or "")
        if pro and commit and row_commit and not (commit.startswith(row_commit) or row_commit.startswith(commit)):
            drop("other commit", f"{row_commit} (the corpus is pinned at {commit})")
            continue
        first = seen.setdefault(query_key(row["question"]), i)
        if first != i:
            drop("repeated question", f"repeats row {first}")
            continue
        files, cited = [], []
        for c in citations(row["answer"], extensions):
            found, candidates = resolve(c["cited"], paths)
            if found is None:
                shown = ", ".join(candidates[:4]) + (" ..." if len(candidates) > 4 else "")
                drop("ambiguous citation" if candidates else "absent citation",
                     f"{c['cited']}: {len(candidates)} files ({shown})" if candidates
                     else f"{c['cited']}: no such file")
                continue
            cited.append({**c, "file": found})
            files.append(found)
        if not files:
            drop("no resolved citation", "the answer cites no file of the tree")
            continue
        qa_type = row.get("qa_type")
        qtype = qa_type if pro and isinstance(qa_type, str) and qa_type else "natural_language"
        gold = {"type": "file_set", "file_set": sorted(set(files)), "citations": cited}
        tasks.append(Task(f"q{i:03d}", row["question"], qtype, gold, corpus, stratum=repo))
    return Loaded(tasks, dropped)


@register("swe-qa")
def load_swe_qa(path: Path, corpus: str, manifest: dict, symbols: list[Symbol]) -> Loaded:
    return _load(path, corpus, manifest, pro=False)


@register("swe-qa-pro")
def load_swe_qa_pro(path: Path, corpus: str, manifest: dict, symbols: list[Symbol]) -> Loaded:
    return _load(path, corpus, manifest, pro=True)
