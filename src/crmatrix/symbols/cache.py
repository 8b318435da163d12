"""Symbols per file content: a file's symbols cached by (blob id, language, extractor), so a commit
whose files mostly occurred before parses only its new ones.

The key is what the symbols depend on and nothing else: the file's bytes (git's blob id,
crmatrix.corpora.blobs: listed by `git ls-tree` for free), its language, and the extractor
(`extractor_key`: this package's source and the versions of tree-sitter and the grammar
wheels). A symbol's path is not part of it: the same bytes at another path have the same
symbols, given that path on the way out.

Like the embedding cache (crmatrix.embed.cache), it must stay correct on a network filesystem
without locks, so nothing in it is modified in place: each write is one new immutable
*shard*, `<root>/<extractor>/<sha256 of its bytes>.sym`, written under a temporary name,
fsynced and renamed (atomic). One shard per batch of files, not one file per file: a
sympy commit is 1,234 distinct files, and an fsync each cost more than a third of parsing
them. A reader takes each entry from the first shard in name order that holds it; two jobs
that parse the same file both store it, with the same symbols.

Shard layout: the line `CRMXSYM1`; a line of canonical JSON listing the entries, each
`[blob, language, offset, length, sha256]` (sorted by blob and language); then each entry's
body at its offset: zlib-compressed canonical JSON `{blob, language, symbols}`, a symbol a
list of the `Symbol` fields but its path. A shard whose header cannot be read is skipped, and
so is an entry whose body does not hash to its sha256 or names another key (its file is parsed
again), each with a warning on stderr; neither is ever read as symbols.
"""

from __future__ import annotations

import functools
import json
import sys
import zlib
from collections.abc import Callable, Iterable
from dataclasses import fields, replace
from pathlib import Path

from crmatrix import CrmatrixError, atomic
from crmatrix.corpora.blobs import BLOB_ID, blob_id
from crmatrix.symbols.extract import extract_source
from crmatrix.symbols.grammars import versions
from crmatrix.symbols.record import Symbol

SUBDIR = "symbols"  # the symbol cache's directory under the configured cache_dir
SUFFIX = ".sym"
_MAGIC = b"CRMXSYM1\n"
_FIELDS = tuple(f.name for f in fields(Symbol) if f.name != "path")
PACKAGE = Path(__file__).resolve().parent
BATCH = 500  # files parsed per shard written: a job killed half-way keeps every full batch

Key = tuple[str, str]  # (blob id, language)
# A file's bytes, or what reads them (called only when its symbols are not cached).
Source = bytes | Callable[[], bytes]


@functools.cache
def extractor_key() -> str:
    """What extraction is besides the bytes: the source of every module of crmatrix.symbols
    and the versions of tree-sitter and the grammar wheels (an edit or upgrade re-extracts)."""
    sources = [[p.name, p.read_text(encoding="utf-8")] for p in sorted(PACKAGE.glob("*.py"))]
    return atomic.hash_obj({"modules": sources, "wheels": versions()})[:16]


class _Invalid(Exception):
    """A shard or entry that must not be trusted: the reason says why."""


def _body(key: Key, symbols: list[Symbol]) -> bytes:
    rows = [[getattr(s, f) for f in _FIELDS] for s in symbols]
    return zlib.compress(atomic.dumps_canonical({"blob": key[0], "language": key[1], "symbols": rows}).encode(), 1)


def shard_bytes(entries: dict[Key, list[Symbol]]) -> bytes:
    """The bytes of one shard holding `entries`; equal entries, equal bytes."""
    header, bodies, offset = [], [], 0
    for key in sorted(entries):
        body = _body(key, entries[key])
        header.append([*key, offset, len(body), atomic.sha256_bytes(body)])
        bodies.append(body)
        offset += len(body)
    return _MAGIC + atomic.dumps_canonical(header).encode() + b"\n" + b"".join(bodies)


def _symbols(key: Key, body: bytes, sha: str) -> list[Symbol]:
    if atomic.sha256_bytes(body) != sha:
        raise _Invalid(f"the entry of {key[0]} ({key[1]}) does not match its hash (torn or altered)")
    entry = json.loads(zlib.decompress(body))
    if (entry["blob"], entry["language"]) != key:
        raise _Invalid(f"the entry of {key[0]} ({key[1]}) holds another file's symbols")
    return [Symbol(path="", **dict(zip(_FIELDS, row, strict=True))) for row in entry["symbols"]]


def _warn(path: Path, reason: str) -> None:
    print(f"crmatrix: symbol cache: skipped {path}: {reason}; its files are parsed again", file=sys.stderr)


class SymbolCache:
    """Symbols by (blob id, language), as immutable shards under `root/<extractor_key>/`."""

    def __init__(self, root: Path):
        self.root = Path(root)

    def directory(self) -> Path:
        return self.root / extractor_key()

    def get_many(self, keys: Iterable[Key]) -> dict[Key, list[Symbol]]:
        """The stored symbols (their path empty) of the keys found; shards are read in name order
        and the first holding a valid entry of a key wins."""
        wanted = set(keys)
        found: dict[Key, list[Symbol]] = {}
        d = self.directory()
        # Temporary files start with a dot and end in .tmp: never listed, so never half-read.
        for path in sorted(d.glob(f"[!.]*{SUFFIX}")) if d.is_dir() else []:
            if not wanted - found.keys():
                break
            try:
                with open(path, "rb") as f:
                    if f.readline() != _MAGIC:
                        raise _Invalid("not a symbol shard")
                    header = json.loads(f.readline())
                    start = f.tell()
                    for blob, language, offset, length, sha in header:
                        key = (blob, language)
                        if key not in wanted or key in found:
                            continue
                        f.seek(start + offset)
                        try:
                            found[key] = _symbols(key, f.read(length), sha)
                        except (_Invalid, ValueError, TypeError, KeyError, zlib.error) as e:
                            _warn(path, str(e))
            except FileNotFoundError:
                continue  # removed meanwhile: its entries are parsed again
            except _Invalid as e:
                _warn(path, str(e))
            except (ValueError, TypeError) as e:
                _warn(path, f"its header is unreadable ({e})")
        return found

    def put_many(self, entries: dict[Key, list[Symbol]]) -> Path | None:
        """Store all entries as one new shard (all or nothing); None when there are none."""
        if not entries:
            return None
        data = shard_bytes(entries)
        path = self.directory() / f"{atomic.sha256_bytes(data)}{SUFFIX}"
        atomic.write_bytes(path, data)
        return path


def extract_blobs(items: Iterable[tuple[str, str, Source, str]], cache: SymbolCache, batch: int = BATCH
                  ) -> tuple[dict[str, list[Symbol]], dict[str, int]]:
    """The symbols of each file `(path, blob id, bytes or a reader of them, language)` by path,
    each list sorted as `extract_source` sorts it, parsing only the contents the cache lacks
    (each distinct content once) and storing them, `batch` files a shard. Bytes read are
    checked against their blob id, so a wrong key is an error, never a wrong entry.

    Returns also `{files, unique, cached, parsed}`: the files, their distinct (blob,
    language) contents, how many of those were served from the cache, and how many parsed.
    """
    items = list(items)
    paths = [path for path, *_ in items]
    if len(set(paths)) != len(paths):
        twice = sorted(p for p in set(paths) if paths.count(p) > 1)
        raise CrmatrixError(f"symbol cache: a path is given twice: {twice[0]}")
    for path, blob, _, _ in items:
        if not BLOB_ID.fullmatch(blob):
            raise CrmatrixError(f"{path}: {blob!r} is not a blob id (40 hex digits)")
    sources = {(blob, language): (path, source) for path, blob, source, language in reversed(items)}
    found = cache.get_many(sources)
    cached = len(found)
    new: dict[Key, list[Symbol]] = {}
    for key in [k for k in dict.fromkeys((blob, language) for _, blob, _, language in items) if k not in found]:
        path, source = sources[key]
        data = source if isinstance(source, bytes) else source()
        if blob_id(data) != key[0]:
            raise CrmatrixError(f"{path}: its bytes have blob id {blob_id(data)}, not the {key[0]} given")
        new[key] = found[key] = extract_source(data, "", key[1])
        if len(new) == batch:
            cache.put_many(new)
            new = {}
    cache.put_many(new)
    symbols = {path: [replace(s, path=path) for s in found[(blob, language)]] for path, blob, _, language in items}
    return symbols, {"files": len(items), "unique": len(found), "cached": cached, "parsed": len(found) - cached}
