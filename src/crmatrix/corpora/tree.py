"""A corpus as indexed: the pinned source narrowed by include/exclude globs, plus its manifest.

The manifest is the corpus's identity downstream: every file with its size and sha256,
per-language counts, what was skipped and why, and one content hash over all of it.

Two source kinds are written out from a benchmark file rather than fetched (pins.FILE_KINDS):
`repoqa` (a RepoQA repository's `content`, path -> text) and `ds1000` (DS-1000's docs
datastore: every distinct gold document, one `{title}.txt` each). The second is a
documents corpus: each file is one document, not source to parse (`DOCUMENT_KINDS`).
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from wcmatch import glob as wcglob

from crmatrix import CrmatrixError, atomic
from crmatrix.corpora.languages import language_for
from crmatrix.datasets.records import read_records

MAX_FILE_BYTES = 1 << 20
# Never part of a corpus: version-control and dependency/build directories.
SKIP_DIRS = {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", ".tox"}


# `**` as a whole segment spans directories, `*` and `?` stay within one name, dot files
# are ordinary files, and matching is case-sensitive on every platform.
GLOB_FLAGS = wcglob.GLOBSTAR | wcglob.DOTGLOB | wcglob.FORCEUNIX
_GLOB_LITERAL = re.compile(r"([\\\[\]])")


def path_filter(include: list[str], exclude: list[str]) -> Callable[[str], bool]:
    """Whether a corpus-relative posix path matches an include glob and no exclude glob.

    Brackets and backslashes are literal, as they always were in crmatrix globs: a file
    named `a[1].py` is written as it is named, not as a character class.
    """
    def literal(patterns: list[str]) -> list[str]:
        return [_GLOB_LITERAL.sub(r"\\\1", p) for p in patterns]

    return wcglob.compile(literal(include), flags=GLOB_FLAGS, exclude=literal(exclude) or None).match


def _skip_reason(path: Path, root: Path) -> tuple[str | None, bytes]:
    """Why `path` is not part of the corpus (None: it is, with its bytes).

    Only regular files are opened: reading a FIFO blocks forever, a socket cannot be read
    and opening a device can act on it. The type is checked on the entry (or the link's
    target) before opening, and again on the open descriptor, in case the entry was
    swapped in between; O_NONBLOCK keeps even that case from blocking.
    """
    if path.is_symlink():
        target = Path(os.path.realpath(path))
        if not target.is_relative_to(root):
            return "symlink-out-of-tree", b""
        if not target.is_file():
            return "symlink-not-a-file", b""
    elif not stat.S_ISREG(path.lstat().st_mode):
        return "not-a-regular-file", b""
    with os.fdopen(os.open(path, os.O_RDONLY | os.O_NONBLOCK), "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            return "not-a-regular-file", b""
        data = f.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        return "too-large", b""
    if b"\0" in data[:8192]:
        return "binary", b""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return "non-utf8", b""
    return None, data


def select_files(src: Path, dest: Path, include: list[str], exclude: list[str]) -> dict:
    """Copy the selected, readable text files of src into dest; return the manifest's file part."""
    root = Path(os.path.realpath(src))
    files, skipped, excluded = [], [], 0
    selected = path_filter(include, exclude)
    for dirpath, dirnames, filenames in os.walk(root):
        kept = sorted(d for d in dirnames if d not in SKIP_DIRS)
        # A symlinked directory is never followed (it may lead out of the tree or into a
        # loop) but, where os.walk is silent, it is counted; globs select files, so it is
        # listed whatever they say, for the user to see what was not read.
        links = {d for d in kept if os.path.islink(os.path.join(dirpath, d))}
        skipped += [{"path": Path(dirpath, d).relative_to(root).as_posix(), "reason": "symlink-to-directory"}
                    for d in sorted(links)]
        dirnames[:] = [d for d in kept if d not in links]
        for fn in sorted(filenames):
            p = Path(dirpath, fn)
            rel = p.relative_to(root).as_posix()
            if not selected(rel):
                excluded += 1
                continue
            reason, data = _skip_reason(p, root)
            if reason:
                skipped.append({"path": rel, "reason": reason})
                continue
            out = dest / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(data)
            files.append({"path": rel, "size": len(data), "sha256": atomic.sha256_bytes(data),
                          "language": language_for(rel)})
    files.sort(key=lambda f: f["path"])
    skipped.sort(key=lambda f: f["path"])
    languages: dict[str, int] = {}
    for f in files:
        lang = f["language"] or "other"
        languages[lang] = languages.get(lang, 0) + 1
    skipped_counts: dict[str, int] = {}
    for s in skipped:
        skipped_counts[s["reason"]] = skipped_counts.get(s["reason"], 0) + 1
    return {
        "files": files,
        "languages": dict(sorted(languages.items())),
        "skipped": skipped,
        "skipped_counts": dict(sorted(skipped_counts.items())),
        "excluded_by_glob": excluded,
        "content_hash": content_hash(files),
    }


def content_hash(files: list[dict]) -> str:
    """One hash over a manifest's files (each path with its sha256): the corpus's identity."""
    return atomic.hash_obj([[f["path"], f["sha256"]] for f in files])


# --- corpora written out from a benchmark file -------------------------------------------------

DOCUMENT_KINDS = ("ds1000",)
DOCUMENT_SUFFIX = ".txt"


def is_documents(manifest: dict) -> bool:
    """Whether a corpus's files are documents (one symbol each), not source to parse."""
    return manifest.get("pin", {}).get("kind") in DOCUMENT_KINDS


def read_repoqa(path: Path) -> dict[str, list[dict]]:
    """A RepoQA file: `{language: [{repo, commit_sha, content, needles}]}`."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CrmatrixError(f"{path}: not readable as JSON: {e}") from e
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


def write_source(kind: str, spec: dict, dest: Path) -> dict:
    """Lay a written-out corpus's files out in dest; returns where they came from."""
    file = Path(spec["file"])
    dest.mkdir(parents=True, exist_ok=True)
    if kind == "repoqa":
        language, _, entry, content = repoqa_repo(file, spec["repo"])
        for rel, text in content.items():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            (dest / rel).write_text(text, encoding="utf-8")
        return {"source": str(file), "repo": spec["repo"], "commit_sha": entry.get("commit_sha"), "language": language}
    texts: dict[str, str] = {}  # title -> the first text of it in file order
    for i, row in enumerate(read_records(file)):
        for d in ds1000_docs(row, f"{file}: row {i}"):
            texts.setdefault(d["title"], d["text"])
    if not texts:
        raise CrmatrixError(f"{file}: no row has gold docs to make a datastore of")
    for title, text in texts.items():
        (dest / f"{title}{DOCUMENT_SUFFIX}").write_text(text, encoding="utf-8")
    return {"source": str(file), "documents": len(texts)}
