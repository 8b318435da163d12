"""The symbols of many commits of one repository, stored once per distinct content.

Most of a repository's files are the same bytes from one commit to the next (sympy's 124
SWE-bench commits hold 166,206 `.py` files but 16,349 distinct blobs), so a store per commit
would hold the same symbols over and over. This store holds each distinct symbol *content* —
a symbol minus its lines: name, kind, parent, path, language, signature, doc, body — once,
and per commit its *occurrences*: (content id, start_line, end_line), in the order a plain
extraction of that commit lists its symbols (`record.sort_key`). A function that moves within
its file, or a file edited elsewhere, keeps its content and changes only an occurrence's lines.

On disk (a directory, written whole or not at all, the same inputs giving the same bytes):

- `contents.jsonl` — one content a line (canonical JSON); its line number is its id. Sorted
  by path, then the other fields, so ids depend on the set of contents, never on the order
  commits came in.
- `contents.offsets.npy` — int64, the byte offset of each line and the file's size: one
  content is read with one seek.
- `occurrences.npy` — int32 (n, 3): content id, start_line, end_line; the commits' runs one
  after the other, commits in sha order.
- `meta.json` — the format, each commit's run [start, end) and file count, the counts and
  `hash` (names the store: an index built from it records it).
- `crmatrix-checksums.json` — `crmatrix.integrity`'s checksums, verified on opening.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path

import numpy as np

from crmatrix import CrmatrixError, atomic, integrity
from crmatrix.symbols.record import Symbol, sort_key

FORMAT = "crmatrix-symbol-store/1"
# A symbol's fields minus its lines: what two occurrences share when they share a content.
CONTENT_FIELDS = ("name", "kind", "parent", "path", "language", "signature", "doc", "body")
CONTENTS = "contents.jsonl"
OFFSETS = "contents.offsets.npy"
OCCURRENCES = "occurrences.npy"
META = "meta.json"

FileSymbols = Callable[[str, str], list[Symbol]] | Mapping[tuple[str, str], list[Symbol]]


def content_of(s: Symbol) -> tuple[str, ...]:
    return tuple(getattr(s, f) for f in CONTENT_FIELDS)


def content_symbol(content: dict, start_line: int = 0, end_line: int = 0) -> Symbol:
    """The symbol of a content at these lines (0: a content alone, for what no line changes)."""
    return Symbol(**{f: content[f] for f in CONTENT_FIELDS}, start_line=int(start_line), end_line=int(end_line))


def _file_symbols(symbols: FileSymbols, path: str, blob: str) -> list[Symbol]:
    if callable(symbols):
        found = symbols(path, blob)
    elif (path, blob) in symbols:
        found = symbols[(path, blob)]
    else:
        raise CrmatrixError(f"symbol store: no symbols given for {path} at blob {blob}")
    wrong = next((s for s in found if s.path != path), None)
    if wrong is not None:
        raise CrmatrixError(f"symbol store: the symbols of {path} at blob {blob} include {wrong.name!r} of "
                            f"{wrong.path}; each file's symbols must carry its path")
    # stable, as a plain extraction sorts a commit's symbols: ties keep the file's own order
    return sorted(found, key=sort_key)


def checked_files(commit: str, files: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """A commit's (path, blob id) pairs in path order; a path listed twice is an error."""
    files = sorted((str(p), str(b)) for p, b in files)
    for (p1, _), (p2, _) in zip(files, files[1:], strict=False):
        if p1 == p2:
            raise CrmatrixError(f"commit {commit}: lists {p1} twice")
    return files


def build(commits: Mapping[str, Iterable[tuple[str, str]]], symbols: FileSymbols, out: Path) -> dict:
    """Write the store of `commits` (sha -> its indexed files as (path, blob id)) into `out`.

    `symbols(path, blob)` (or `symbols[(path, blob)]`) gives the symbols of one file, as a
    plain extraction of it gives them (each carries `path` and its lines); each distinct
    (path, blob) is asked once. Returns the meta written."""
    per_commit = {c: checked_files(c, files) for c, files in sorted(commits.items())}
    # each distinct file once: (content, start, end) of its symbols, contents as field tuples
    files: dict[tuple[str, str], list[tuple[tuple, int, int]]] = {}
    for pairs in per_commit.values():
        for pb in pairs:
            if pb not in files:
                files[pb] = [(content_of(s), s.start_line, s.end_line) for s in _file_symbols(symbols, *pb)]
    # by path first: a commit's contents lie together in the file
    ordered = sorted({c for occ in files.values() for c, _, _ in occ}, key=lambda c: (c[3], c))
    ids = {c: i for i, c in enumerate(ordered)}
    runs, parts, at = {}, [], 0
    for commit, pairs in per_commit.items():
        rows = [(ids[c], start, end) for pb in pairs for c, start, end in files[pb]]
        parts.append(np.asarray(rows, dtype=np.int64).reshape(-1, 3))
        runs[commit] = {"start": at, "end": at + len(rows), "files": len(pairs)}
        at += len(rows)
    occurrences = np.concatenate(parts) if parts else np.zeros((0, 3), dtype=np.int64)
    if occurrences.size and (occurrences.min() < 0 or occurrences.max() > np.iinfo(np.int32).max):
        raise CrmatrixError("symbol store: a line number or content id outside int32")
    lines = [(atomic.dumps_canonical(dict(zip(CONTENT_FIELDS, c, strict=True))) + "\n").encode() for c in ordered]
    offsets = np.concatenate(([0], np.cumsum([len(b) for b in lines], dtype=np.int64)))
    body = b"".join(lines)
    with atomic.staged_dir(Path(out)) as d:
        (d / CONTENTS).write_bytes(body)
        np.save(d / OFFSETS, offsets.astype(np.int64))
        np.save(d / OCCURRENCES, occurrences.astype(np.int32))
        meta = {"format": FORMAT, "commits": runs, "contents": len(ordered), "occurrences": int(at),
                "files": len(files),
                "hash": atomic.hash_obj([atomic.sha256_bytes(body), atomic.sha256_file(d / OCCURRENCES), runs])}
        atomic.write_json(d / META, meta)
        integrity.record(d)
    return meta


def commit_run(meta: dict, commit: str, where: Path) -> dict:
    """The commit's run {start, end} among the occurrences a meta.json lists."""
    run = meta["commits"].get(commit)
    if run is None:
        raise CrmatrixError(f"{where}: holds no commit {commit} (it holds {len(meta['commits'])})")
    return run


class SymbolStore:
    """A store `build` wrote, opened: its bytes verified, its arrays memory-mapped."""

    def __init__(self, directory: Path):
        self.directory = Path(directory)
        meta_file = self.directory / META
        if not meta_file.is_file():
            raise CrmatrixError(f"{self.directory}: not a symbol store (no {META})")
        integrity.verify(self.directory)
        self.meta = atomic.read_json(meta_file)
        if self.meta.get("format") != FORMAT:
            raise CrmatrixError(f"{meta_file}: format {self.meta.get('format')!r}, expected {FORMAT!r}; build the "
                                "store again")
        self.hash: str = self.meta["hash"]
        self.commits: tuple[str, ...] = tuple(self.meta["commits"])
        self._offsets = np.load(self.directory / OFFSETS, mmap_mode="r")
        self._occurrences = np.load(self.directory / OCCURRENCES, mmap_mode="r")
        self._last_symbols: dict[tuple[int, int, int], Symbol] = {}  # commit_symbols' last, by occurrence

    def __len__(self) -> int:
        """The number of distinct contents."""
        return int(self.meta["contents"])

    def occurrences(self, commit: str) -> np.ndarray:
        """The commit's (content id, start_line, end_line) rows, int32, in symbol order."""
        run = commit_run(self.meta, commit, self.directory)
        return self._occurrences[run["start"]:run["end"]]

    def contents(self, ids: Iterable[int]) -> list[dict]:
        """The contents of these ids, in the order given (each line read with one seek)."""
        ids = [int(i) for i in ids]
        got: dict[int, dict] = {}
        with open(self.directory / CONTENTS, "rb") as f:
            for i in sorted(set(ids)):
                f.seek(int(self._offsets[i]))
                got[i] = json.loads(f.read(int(self._offsets[i + 1] - self._offsets[i])))
        return [got[i] for i in ids]

    def all_contents(self) -> Iterable[dict]:
        """Every content in id order, streamed."""
        with open(self.directory / CONTENTS, encoding="utf-8") as f:
            for line in f:
                yield json.loads(line)

    def symbols_of(self, commit: str) -> list[Symbol]:
        """The commit's symbols, exactly the list a plain extraction of its tree gives."""
        return list(CommitSymbols(self, self.occurrences(commit)))

    def commit_symbols(self, occurrences: np.ndarray) -> list[Symbol]:
        """The symbols of one commit's occurrences. Those the previous call made are reused and
        the contents of the rest read in one pass: consecutive commits share most of their
        symbols, so a job over many commits makes each about once while holding one commit's."""
        rows = list(map(tuple, np.asarray(occurrences).tolist()))
        last = self._last_symbols
        missing = sorted({c for c, start, end in rows if (c, start, end) not in last})
        contents = dict(zip(missing, self.contents(missing), strict=True))
        made = {row: last.get(row) or content_symbol(contents[row[0]], row[1], row[2]) for row in dict.fromkeys(rows)}
        self._last_symbols = made
        return [made[row] for row in rows]


class CommitSymbols(Sequence):
    """A commit's symbols as a sequence. Indexed, its items are read from the store when asked
    for (an engine asks for its hits' only), each content once; iterated (an evaluation's gold
    and units pass over all of them, several times), they are read in one pass and kept."""

    def __init__(self, store: SymbolStore, occurrences: np.ndarray):
        self._store, self._occ = store, np.asarray(occurrences)
        self._contents: dict[int, dict] = {}
        self._all: list[Symbol] | None = None

    def __len__(self) -> int:
        return len(self._occ)

    def __getitem__(self, i):
        if self._all is not None:
            return self._all[i]
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        content, start, end = (int(v) for v in self._occ[i])
        if content not in self._contents:
            self._contents[content] = self._store.contents([content])[0]
        return content_symbol(self._contents[content], start, end)

    def __iter__(self) -> Iterator[Symbol]:
        if self._all is None:
            self._all = self._store.commit_symbols(self._occ)
        return iter(self._all)
