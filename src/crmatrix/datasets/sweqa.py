"""`swe-qa` and `swe-qa-pro`: repository questions whose reference answers cite files and code.

SWE-QA (peng-weihan/SWE-QA-Bench) rows are `{question, answer}`, one file per repository;
SWE-QA-Pro (TIGER-Lab/SWE-QA-Pro-Bench) rows add `repo`, `commit_id`, `cluster` and
`qa_type` (what / where / why / how) and mix repositories in one file, so its rows of
another repository or commit than the corpus's pin are dropped (counted). The answers cite
files in prose (`src/flask/json/provider.py`, `blueprints.py: line 172`) and, more often in
some repositories than files, code by name (`Flask.make_response`, `` `get_option` ``,
`SegmentPrefetch`). Each citation is resolved against the pinned tree as indexed
(crmatrix.datasets.citations); one that names several files or none is dropped and counted
by its reason (ambiguous or absent citation, ambiguous or unresolved name), and so is a bare
lowercase name that names one file (`common name`: `read` is as likely the file object's), and
a question left with no resolved citation. Gold is the set of resolved files (`file_set`): a
system is scored on the files of its hits, each file at its first hit's rank. The summary
counts the gold files a name alone made gold (no path cites them).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path, PurePosixPath

from crmatrix.datasets import citations
from crmatrix.datasets.records import is_hub, read_records
from crmatrix.datasets.registry import Loaded, register
from crmatrix.datasets.rows import check_fields, corpus_repo, query_key
from crmatrix.datasets.tasks import Task
from crmatrix.symbols import Symbol


def _same_repo(row_repo: str, ours: str) -> bool:
    a, b = row_repo.strip().lower().removesuffix(".git"), ours.lower()
    return a == b or a.rsplit("/", 1)[-1] == b.rsplit("/", 1)[-1]


def _cite(answer: str, paths: list[str], extensions: set[str], definitions: citations.Definitions
          ) -> tuple[list[dict], list[tuple[str, str]]]:
    """The answer's citations that name one file (each with its `file`), and the others as
    (reason, detail)."""
    cited, failed = [], []

    def fail(kind: str, what: str, candidates: list[str], absent: str) -> None:
        shown = ", ".join(candidates[:4]) + (" ..." if len(candidates) > 4 else "")
        failed.append((f"ambiguous {kind}", f"{what}: {len(candidates)} files ({shown})") if candidates
                      else (f"{'absent' if kind == 'citation' else 'unresolved'} {kind}", f"{what}: {absent}"))

    for c in citations.paths(answer, extensions):
        found, candidates = citations.resolve_path(c["cited"], paths)
        if found is None:
            fail("citation", c["cited"], candidates, "no such file")
        else:
            cited.append({**c, "file": found})
    for name in citations.names(answer, extensions):
        found, candidates = definitions.resolve(name)
        if found is None:
            fail("name", name, candidates, "no definition or module")
        elif not citations.distinctive(name):
            failed.append(("common name", f"{name}: only {found} defines it, but a bare lowercase word is as likely "
                                          "the language's or another library's"))
        else:
            cited.append({"name": name, "file": found})
    return cited, failed


def _load(path: Path, corpus: str, manifest: dict, symbols: list[Symbol], pro: bool) -> Loaded:
    rows = read_records(path)
    paths = [f["path"] for f in manifest["files"]]
    extensions = {PurePosixPath(p).suffix.lstrip(".").lower() for p in paths} - {""}
    repo = corpus_repo(manifest, corpus)
    commit = manifest.get("pin", {}).get("commit", "")
    definitions = citations.Definitions(symbols, paths)
    tasks, dropped, seen = [], [], {}
    where_file = path if is_hub(path) else Path(path)
    for i, row in enumerate(rows):
        where = f"{where_file}: row {i}"
        check_fields(row, where, ("question", "answer", *(("repo",) if pro else ())))

        def drop(reason: str, detail: str, row: int = i) -> None:
            dropped.append({"row": row, "reason": reason, "detail": detail})

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
        cited, failed = _cite(row["answer"], paths, extensions, definitions)
        for reason, detail in failed:
            drop(reason, detail)
        if not cited:
            counts = ", ".join(f"{n} {r}" for r, n in sorted(Counter(r for r, _ in failed).items()))
            drop("no resolved citation", f"no citation of the answer names one file of the tree ({counts})" if failed
                 else "the answer cites no path or name")
            continue
        qa_type = row.get("qa_type") if pro else None
        qtype = qa_type if isinstance(qa_type, str) and qa_type else "natural_language"
        gold = {"type": "file_set", "file_set": sorted({c["file"] for c in cited}), "citations": cited}
        tasks.append(Task(f"q{i:03d}", row["question"], qtype, gold, corpus, stratum=repo))
    return Loaded(tasks, dropped, describe_gold=citations.gold_by_name_alone)


@register("swe-qa")
def load_swe_qa(path: Path, corpus: str, manifest: dict, symbols: list[Symbol]) -> Loaded:
    return _load(path, corpus, manifest, symbols, pro=False)


@register("swe-qa-pro")
def load_swe_qa_pro(path: Path, corpus: str, manifest: dict, symbols: list[Symbol]) -> Loaded:
    return _load(path, corpus, manifest, symbols, pro=True)
