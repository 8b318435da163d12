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
  by path, then key, so ids depend on the set of contents, never on the order commits came in.
- `contents.offsets.npy` — int64, the byte offset of each line and the file's size: one
  content is read with one seek.
- `contents.keys.npy` — uint8 (contents, 16): each content's key, the first 16 bytes of its
  line's sha256: what an index built from another store matches its contents by.
- `files.json` — the distinct (path, blob) of the commits, sorted; `files.rows.npy`, int32
  (n, 3): each file's (content id, start_line, end_line) rows in symbol order, files one after
  the other; `files.starts.npy`, int64: where each file's rows start, and their number.
- `occurrences.npy` — int32 (n, 3): content id, start_line, end_line; the commits' runs one
  after the other, commits in sha order (a commit's are its files' rows, files in path order,
  as a plain extraction sorts its symbols).
- `meta.json` — the format, each commit's run [start, end) and file count, the counts and
  `hash` (names the store: an index built from it records it).
- `crmatrix-checksums.json` — `crmatrix.integrity`'s checksums, verified on opening.

A store grows from another (`build(..., base=)`, the previous store of the repository,
`crmatrix.versions.bases`): the files the base holds take its rows, only the others' symbols are asked
for, and the contents are gathered (`crmatrix.versions.grown`) — the bytes a build without it writes.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import mmap
import os
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from functools import cached_property
from pathlib import Path

import numpy as np

from crmatrix import CrmatrixError, atomic, integrity
from crmatrix.symbols.record import Symbol, sort_key
from crmatrix.versions.grown import Grown

FORMAT = "crmatrix-symbol-store/2"
# A symbol's fields minus its lines: what two occurrences share when they share a content.
CONTENT_FIELDS = ("name", "kind", "parent", "path", "language", "signature", "doc", "body")
CONTENTS = "contents.jsonl"
OFFSETS = "contents.offsets.npy"
KEYS = "contents.keys.npy"
OCCURRENCES = "occurrences.npy"
FILES = "files.json"
FILE_ROWS = "files.rows.npy"
FILE_STARTS = "files.starts.npy"
META = "meta.json"
KEY_BYTES = 16

FileSymbols = Callable[[str, str], list[Symbol]] | Mapping[tuple[str, str], list[Symbol]]


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


def content_line(s: Symbol) -> bytes:
    """A symbol's content as the store holds it: canonical JSON, one line."""
    return (atomic.dumps_canonical({f: getattr(s, f) for f in CONTENT_FIELDS}) + "\n").encode()


def content_key(line: bytes) -> bytes:
    """What names a content across stores: the first 16 bytes of its line's sha256."""
    return hashlib.sha256(line).digest()[:KEY_BYTES]


class _Sources:
    """The contents a build draws on: the base's (ids 0..), then each new one once (by key)."""

    def __init__(self, base: SymbolStore | None):
        self.base = base
        self.n_base = len(base) if base else 0
        self.new_lines: list[bytes] = []
        self.new_keys: list[bytes] = []
        self._ids: dict[bytes, int] | None = None

    def rows(self, symbols: list[Symbol]) -> np.ndarray:
        """A new file's (source id, start_line, end_line) rows."""
        if self._ids is None:  # a new file's content may be the base's: the base's keys, once
            self._ids = {k: i for i, k in enumerate(map(bytes, self.base.keys()))} if self.base else {}
        rows = []
        for s in symbols:
            line = content_line(s)
            key = content_key(line)
            sid = self._ids.setdefault(key, self.n_base + len(self.new_lines))
            if sid == self.n_base + len(self.new_lines):
                self.new_lines.append(line)
                self.new_keys.append(key)
            rows.append((sid, s.start_line, s.end_line))
        return np.asarray(rows, dtype=np.int64).reshape(-1, 3)

    def keys(self) -> np.ndarray:
        new = np.frombuffer(b"".join(self.new_keys), dtype=np.uint8).reshape(-1, KEY_BYTES)
        return np.concatenate([self.base.keys(), new]) if self.base else new

    def lines(self, ids: np.ndarray) -> bytes:
        body, offsets = (self.base.body(), self.base.offsets().tolist()) if self.base else (b"", [0])
        return b"".join(body[offsets[i]:offsets[i + 1]] if i < self.n_base else self.new_lines[i - self.n_base]
                        for i in ids.tolist())


def build(commits: Mapping[str, Iterable[tuple[str, str]]], symbols: FileSymbols, out: Path,
          base: SymbolStore | None = None) -> dict:
    """Write the store of `commits` (sha -> its indexed files as (path, blob id)) into `out`.

    `symbols(path, blob)` (or `symbols[(path, blob)]`) gives the symbols of one file, as a
    plain extraction of it gives them (each carries `path` and its lines); it is asked once
    for each distinct (path, blob) the `base` (a store built before, of any commits) does not
    hold: the rows of the others are the base's. The bytes are those of a build without a
    base. Returns the meta written, with `grown`: the base's files and contents reused."""
    per_commit = {c: checked_files(c, files) for c, files in sorted(commits.items())}
    files = sorted({pb for pairs in per_commit.values() for pb in pairs})
    held = base.file_ids() if base else {}
    sources = _Sources(base)
    if base:
        base_indptr, base_rows = base.file_rows()
    parts = []
    for pb in files:
        f = held.get(pb)
        parts.append(np.asarray(base_rows[base_indptr[f]:base_indptr[f + 1]], dtype=np.int64) if f is not None
                     else sources.rows(_file_symbols(symbols, *pb)))
    sizes = np.fromiter(map(len, parts), dtype=np.int64, count=len(parts))
    rows = np.concatenate(parts) if parts else np.zeros((0, 3), dtype=np.int64)
    # the contents the files hold, by path (a commit's lie together), then key
    paths = sorted({p for p, _ in files})
    place = {p: i for i, p in enumerate(paths)}
    n = sources.n_base + len(sources.new_lines)
    content_path = np.full(n, -1, dtype=np.int64)
    content_path[rows[:, 0]] = np.repeat([place[p] for p, _ in files], sizes)
    used = np.flatnonzero(content_path >= 0)
    keys = sources.keys()
    halves = keys.view(">u8").reshape(-1, 2) if n else np.zeros((0, 2), dtype=np.uint64)
    ordered = used[np.lexsort((halves[used, 1], halves[used, 0], content_path[used]))]
    grown = Grown(sources.n_base, len(sources.new_lines), ordered)
    at = np.concatenate(grown.renumbering())
    rows[:, 0] = at[rows[:, 0]]
    # each commit's occurrences: its files' rows, files in path order
    ids = {pb: i for i, pb in enumerate(files)}
    instance = np.fromiter((ids[pb] for pairs in per_commit.values() for pb in pairs), dtype=np.int64,
                           count=sum(map(len, per_commit.values())))
    starts = np.concatenate(([0], np.cumsum(sizes)))
    lengths = sizes[instance]
    ends = np.cumsum(lengths)
    occurrences = rows[np.repeat(starts[instance] - (ends - lengths), lengths) + np.arange(int(ends[-1]) if len(ends)
                                                                                              else 0)]
    runs, at_file = {}, 0
    for commit, pairs in per_commit.items():
        lo = int(ends[at_file - 1]) if at_file else 0
        at_file += len(pairs)
        runs[commit] = {"start": lo, "end": int(ends[at_file - 1]) if at_file else 0, "files": len(pairs)}
    if rows.size and (rows.min() < 0 or rows.max() > np.iinfo(np.int32).max):
        raise CrmatrixError("symbol store: a line number or content id outside int32")
    body = sources.lines(ordered)
    offsets = np.concatenate(([0], np.cumsum(grown.take(np.diff(base.offsets()) if base else [],
                                                        [len(line) for line in sources.new_lines]))))
    with atomic.staged_dir(Path(out)) as d:
        (d / CONTENTS).write_bytes(body)
        np.save(d / OFFSETS, offsets.astype(np.int64))
        np.save(d / KEYS, keys[ordered])
        np.save(d / OCCURRENCES, occurrences.astype(np.int32))
        np.save(d / FILE_ROWS, rows.astype(np.int32))
        np.save(d / FILE_STARTS, starts.astype(np.int64))
        atomic.write_json(d / FILES, [list(pb) for pb in files])
        meta = {"format": FORMAT, "commits": runs, "contents": len(ordered), "occurrences": len(occurrences),
                "files": len(files),
                "hash": atomic.hash_obj([atomic.sha256_bytes(body), atomic.sha256_file(d / OCCURRENCES),
                                         atomic.sha256_file(d / FILE_ROWS), atomic.sha256_file(d / FILES), runs])}
        atomic.write_json(d / META, meta)
        integrity.record(d)
    return {**meta, "grown": {"files": len(files) - sum(pb not in held for pb in files),
                              "contents": int((ordered < sources.n_base).sum())}}


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

    def keys(self) -> np.ndarray:
        """Each content's key (`content_key`), uint8 (contents, 16)."""
        return np.load(self.directory / KEYS)

    def body(self) -> bytes:
        """The contents' lines, all of them."""
        return (self.directory / CONTENTS).read_bytes()

    def offsets(self) -> np.ndarray:
        return np.asarray(self._offsets)

    def files(self) -> list[tuple[str, str]]:
        """The distinct (path, blob) of its commits, sorted."""
        return [(p, b) for p, b in atomic.read_json(self.directory / FILES)]

    def file_ids(self) -> dict[tuple[str, str], int]:
        return {pb: i for i, pb in enumerate(self.files())}

    def file_rows(self) -> tuple[np.ndarray, np.ndarray]:
        """(starts, rows): file i's (content id, start_line, end_line) rows are rows[starts[i]:starts[i + 1]]."""
        return np.load(self.directory / FILE_STARTS), np.load(self.directory / FILE_ROWS)

    @cached_property
    def content_paths(self) -> tuple[list[str], np.ndarray]:
        """(paths, of): the distinct paths of its files, sorted, and each content's place among
        them (a content holds its path, so it is its files' path), from the file rows alone."""
        files = self.files()
        paths = sorted({p for p, _ in files})
        place = {p: i for i, p in enumerate(paths)}
        starts, rows = self.file_rows()
        of = np.full(len(self), -1, dtype=np.int32)
        of[rows[:, 0]] = np.repeat(np.fromiter((place[p] for p, _ in files), dtype=np.int32, count=len(files)),
                                   np.diff(starts))
        return paths, of

    def occurrences(self, commit: str) -> np.ndarray:
        """The commit's (content id, start_line, end_line) rows, int32, in symbol order."""
        run = commit_run(self.meta, commit, self.directory)
        return self._occurrences[run["start"]:run["end"]]

    @cached_property
    def _mapped(self) -> mmap.mmap | bytes:
        """The contents' lines, memory-mapped once: an engine reads its hits' contents a few at a
        time, and opening the file for each was 4 % of a SWE-bench evaluation."""
        with open(self.directory / CONTENTS, "rb") as f:
            return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if os.fstat(f.fileno()).st_size else b""

    def contents(self, ids: Iterable[int]) -> list[dict]:
        """The contents of these ids, in the order given (each line sliced from the mapped file)."""
        ids = [int(i) for i in ids]
        body, offsets = self._mapped, self._offsets
        got = {i: json.loads(body[int(offsets[i]):int(offsets[i + 1])]) for i in sorted(set(ids))}
        return [got[i] for i in ids]

    def all_contents(self) -> Iterable[dict]:
        """Every content in id order, streamed."""
        with open(self.directory / CONTENTS, encoding="utf-8") as f:
            for line in f:
                yield json.loads(line)

    def symbols_of(self, commit: str) -> list[Symbol]:
        """The commit's symbols, exactly the list a plain extraction of its tree gives."""
        return list(CommitSymbols(self, self.occurrences(commit)))

    def symbols_in(self, commit: str, paths: Collection[str]) -> list[Symbol]:
        """The commit's symbols in these files: `symbols_of(commit)` filtered by path, in its order,
        with only their contents read (a task's base file or gold files, where a commit of sympy
        holds 15k-45k symbols: reading them all was most of localizing its tasks)."""
        names, of = self.content_paths
        places = [i for i in (bisect.bisect_left(names, p) for p in paths) if i < len(names) and names[i] in paths]
        occ = np.asarray(self.occurrences(commit))
        rows = occ[np.isin(of[occ[:, 0]], places)].tolist()
        ids = sorted({c for c, _, _ in rows})
        contents = dict(zip(ids, self.contents(ids), strict=True))
        return [content_symbol(contents[c], start, end) for c, start, end in rows]

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

    def paths(self) -> list[str]:
        """Each symbol's path, in order, without making the symbols (`crmatrix.symbols.paths`)."""
        if self._all is not None:
            return [s.path for s in self._all]
        paths, of = self._store.content_paths
        return [paths[i] for i in of[self._occ[:, 0]].tolist()]

    def __iter__(self) -> Iterator[Symbol]:
        if self._all is None:
            self._all = self._store.commit_symbols(self._occ)
        return iter(self._all)
