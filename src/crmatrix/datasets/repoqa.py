"""`repoqa`: RepoQA's Search-Needle-Function task, and its repositories as corpora.

The file is one JSON object `{language: [{repo, commit_sha, content, needles}]}` (RepoQA's
release shape): `content` maps each path of the repository to its text, and each needle is
`{name, path, start_line, end_line, description}` with 1-based inclusive lines. The query
is the description (written, as RepoQA's are, about behaviour, not the name).

Corpus kind `repoqa: {file, repo}` (`write_corpus`) writes that repository's `content` out, so
the benchmark runs with no other download; the dataset picks its repository's needles by
the corpus's repo (a written-out corpus's `repo`, or a git corpus's `owner/name`).

Relevance: a corpus function whose syntax equals the needle's up to whitespace, comments
and decorators (`crmatrix.datasets.astequiv`), found at load time among the corpus's symbols — the
needle itself and any copy of it. A needle whose lines hold no such function, or whose
file is not part of the corpus, is dropped and counted, as is one that repeats an earlier
needle's description or function (a published file is taken as it is, and one question
scored twice would count double in the mean and the paired tests). The file is read as JSON, not
through the `datasets` library: it is one object keyed by language, not a table of rows.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from crmatrix import CrmatrixError
from crmatrix.atomic import sha256_bytes
from crmatrix.datasets.astequiv import Fingerprinter
from crmatrix.datasets.registry import Loaded, register
from crmatrix.datasets.rows import check_fields, corpus_repo, query_key, read_json_document
from crmatrix.datasets.tasks import Task
from crmatrix.symbols import Symbol

FUNCTION_KINDS = ("function", "method")


def read_repoqa(path: Path) -> dict[str, list[dict]]:
    """A RepoQA file: `{language: [{repo, commit_sha, content, needles}]}`."""
    data = read_json_document(path, "an object of language -> list of repositories (RepoQA's shape)")
    if not isinstance(data, dict) or not data or not all(isinstance(v, list) for v in data.values()):
        raise CrmatrixError(f"{path}: expected an object of language -> list of repositories (RepoQA's shape)")
    return data


def repoqa_repo(path: Path, repo: str) -> tuple[str, int, dict, dict[str, str]]:
    """(language, index, entry, content) of `repo` in a RepoQA file; content is checked to be
    relative paths inside the repository, each with its text."""
    known = []
    for language, entries in read_repoqa(path).items():
        for i, entry in enumerate(entries):
            where = f"{path}: {language}[{i}]"
            if not isinstance(entry, dict) or not isinstance(entry.get("repo"), str):
                raise CrmatrixError(f"{where}: expected an object with a string field 'repo'")
            if entry["repo"] != repo:
                known.append(entry["repo"])
                continue
            content = entry.get("content")
            if not isinstance(content, dict) or not content:
                raise CrmatrixError(f"{where}: field 'content' must be an object of path -> file text")
            for rel, text in content.items():
                parts = PurePosixPath(rel).parts
                if not isinstance(text, str) or rel.startswith("/") or ".." in parts or not parts:
                    raise CrmatrixError(f"{where}: content {rel!r}: expected a relative path inside the repository "
                                        "and its text")
            return language, i, entry, content
    raise CrmatrixError(f"{path}: no repository {repo!r} (it has: {', '.join(sorted(known))})")


def write_corpus(spec: dict, dest: Path) -> dict:
    """Corpus kind `repoqa: {file, repo}`: the repository's `content` laid out in dest; returns
    where it came from."""
    file = Path(spec["file"])
    language, _, entry, content = repoqa_repo(file, spec["repo"])
    for rel, text in content.items():
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        (dest / rel).write_text(text, encoding="utf-8")
    return {"source": str(file), "repo": spec["repo"], "commit_sha": entry.get("commit_sha"), "language": language}


def _needle_fields(needle, where: str) -> None:
    check_fields(needle, where, ("name", "path", "description"))
    for key in ("start_line", "end_line"):
        if not isinstance(needle.get(key), int) or isinstance(needle[key], bool) or needle[key] < 1:
            raise CrmatrixError(f"{where}: field '{key}' must be a line number >= 1, got {needle.get(key)!r}")
    if needle["end_line"] < needle["start_line"]:
        raise CrmatrixError(f"{where}: end_line {needle['end_line']} is before start_line {needle['start_line']}")


@register("repoqa", pass_at_1=True, corpus_kind="repoqa", write_corpus=write_corpus)
def load_repoqa(path: Path, corpus: str, manifest: dict, symbols: list[Symbol]) -> Loaded:
    repo = corpus_repo(manifest, corpus)
    language, i, entry, content = repoqa_repo(path, repo)
    where_repo = f"{path}: {language}[{i}] ({repo})"
    needles = entry.get("needles")
    if not isinstance(needles, list) or not needles:
        raise CrmatrixError(f"{where_repo}: field 'needles' must be a non-empty list")
    # The needle's lines are those of the file in the RepoQA file; a corpus file that differs
    # from it (another commit) cannot be judged by them.
    sha = {f["path"]: f["sha256"] for f in manifest["files"]}
    same_files = {rel for rel, text in content.items() if sha.get(rel) == sha256_bytes(text.encode("utf-8"))}
    prints = Fingerprinter(lambda rel: content[rel].encode("utf-8"))
    functions = [s for s in symbols if s.kind in FUNCTION_KINDS and s.path in same_files]
    by_print: dict = {}
    for s in functions:
        by_print.setdefault(prints.of(s.path, s.start_line, s.end_line), []).append(s)
    tasks, dropped, seen, functions_seen = [], [], {}, {}
    for j, needle in enumerate(needles):
        where = f"{where_repo}: needle {j}"
        _needle_fields(needle, where)
        name, rel = needle["name"], needle["path"]
        if rel not in same_files:
            why = "differs from the corpus's" if rel in sha else "is not in the corpus"
            dropped.append({"row": j, "reason": "needle file not in the corpus", "detail": f"{name}: {rel} {why}"})
            continue
        first = seen.setdefault(query_key(needle["description"]), j)
        if first != j:
            dropped.append({"row": j, "reason": "repeated description", "detail": f"{name}: repeats needle {first}"})
            continue
        same = by_print.get(prints.of(rel, needle["start_line"], needle["end_line"]), [])
        function = next((s for s in same if s.path == rel and s.name == name and s.start_line <= needle["end_line"]
                         and s.end_line >= needle["start_line"]), None)
        if function is None:
            dropped.append({"row": j, "reason": "no function at the needle's lines",
                            "detail": f"{name}: {rel}:{needle['start_line']}-{needle['end_line']} holds no function "
                                      f"{name!r} (whitespace, comments and decorators aside)"})
            continue
        first = functions_seen.setdefault((function.path, function.start_line, function.name), j)
        if first != j:
            dropped.append({"row": j, "reason": "repeated needle",
                            "detail": f"{name}: {rel}:{function.start_line} is needle {first}'s function, under "
                                      "another description"})
            continue
        gold = {"type": "needle", "name": name, "path": rel, "start_line": needle["start_line"],
                "end_line": needle["end_line"],
                "equivalent": sorted([s.path, s.name, s.start_line, s.end_line] for s in same)}
        tasks.append(Task(f"n{j:03d}", needle["description"], "natural_language", gold, corpus, stratum=repo))
    return Loaded(tasks, dropped)
