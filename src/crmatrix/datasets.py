"""Query datasets: one loader per format, registered by name, each yielding validated tasks.

A task is `{task_id, query, query_type, gold, corpus}`; validation happens at load time
against the corpus as indexed, so a bad row stops the run before any search is made.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from crmatrix import CrmatrixError
from crmatrix.atomic import read_jsonl
from crmatrix.hits import Hit, docid
from crmatrix.symbols import Symbol

QUERY_TYPES = ("natural_language", "short_phrase", "identifier", "issue_to_edit")
UNCATEGORIZED = "uncategorized"


@dataclass(frozen=True)
class Task:
    task_id: str
    query: str
    query_type: str
    gold: dict
    corpus: str

    def to_dict(self) -> dict:
        return asdict(self)


def read_tasks(path: Path) -> list[Task]:
    """The normalized tasks a dataset stage wrote."""
    return [Task(**d) for d in read_jsonl(path)]


Loader = Callable[[Path, str, dict, list[Symbol]], list[Task]]
LOADERS: dict[str, Loader] = {}


def register(name: str) -> Callable[[Loader], Loader]:
    def deco(fn: Loader) -> Loader:
        LOADERS[name] = fn
        return fn

    return deco


def load(path: Path, fmt: str, corpus: str, manifest: dict, symbols: list[Symbol]) -> list[Task]:
    if fmt not in LOADERS:
        raise CrmatrixError(f"{path}: unknown dataset format {fmt!r} (known: {', '.join(sorted(LOADERS))})")
    return LOADERS[fmt](Path(path), corpus, manifest, symbols)


def _is_gold(gold: dict, name: str, path: str) -> bool:
    """Symbol gold: exact symbol name and a path ending with the expected suffix (the seed's rule)."""
    return name == gold["symbol"] and path.endswith(gold["file_suffix"])


def is_relevant(gold: dict, hit: Hit) -> bool:
    return _is_gold(gold, hit.symbol, hit.path)


def relevant_symbols(gold: dict, symbols: list[Symbol]) -> list[Symbol]:
    return [s for s in symbols if _is_gold(gold, s.name, s.path)]


def _query_key(query: str) -> str:
    """What makes two queries the same question: text without surrounding whitespace, case
    folded. Case is folded because every builtin method reads a query case-insensitively
    (lexical, bm25 and 2e lowercase it, MiniLM's tokenizer is uncased), so `Parse config`
    and `parse config` would be one question counted twice in the mean and the paired tests."""
    return query.strip().casefold()


@register("codelens")
def load_codelens(path: Path, corpus: str, manifest: dict, symbols: list[Symbol]) -> list[Task]:
    """JSON list of {query, expected_symbol, expected_file_suffix, query_type?}."""
    try:
        rows = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CrmatrixError(f"{path}: not readable as JSON: {e}") from e
    if not isinstance(rows, list) or not rows:
        raise CrmatrixError(f"{path}: expected a non-empty JSON list of query objects")
    paths = [f["path"] for f in manifest["files"]]
    by_file: dict[str, list[str]] = {}
    for s in symbols:
        by_file.setdefault(s.path, []).append(s.name)
    tasks = []
    seen: dict[str, int] = {}
    for i, row in enumerate(rows):
        where = f"{path}: row {i}"
        if not isinstance(row, dict):
            raise CrmatrixError(f"{where}: expected an object, got {type(row).__name__}")
        for key in ("query", "expected_symbol", "expected_file_suffix"):
            if not isinstance(row.get(key), str) or not row[key].strip():
                raise CrmatrixError(f"{where}: field '{key}' must be a non-empty string, got {row.get(key)!r}")
        first = seen.setdefault(_query_key(row["query"]), i)
        if first != i:
            earlier = rows[first]["query"]
            same = "" if earlier.strip() == row["query"].strip() else f" ({earlier!r})"
            raise CrmatrixError(f"{where}: query {row['query']!r} repeats row {first}{same}")
        qtype = row.get("query_type", UNCATEGORIZED)
        if qtype not in (*QUERY_TYPES, UNCATEGORIZED):
            raise CrmatrixError(f"{where}: field 'query_type' is {qtype!r}; expected one of: {', '.join(QUERY_TYPES)}")
        suffix, name = row["expected_file_suffix"], row["expected_symbol"]
        matching = [p for p in paths if p.endswith(suffix)]
        if not matching:
            raise CrmatrixError(f"{where}: field 'expected_file_suffix' {suffix!r} matches no file of corpus {corpus!r}")
        if not any(name in by_file.get(p, ()) for p in matching):
            near = sorted({n for p in matching for n in by_file.get(p, ())})
            raise CrmatrixError(
                f"{where}: field 'expected_symbol' {name!r} is not a symbol of {', '.join(matching[:3])}"
                f"{' ...' if len(matching) > 3 else ''} (it has {len(near)}: {', '.join(near[:12])}{' ...' if len(near) > 12 else ''})"
            )
        tasks.append(Task(f"q{i:03d}", row["query"], qtype,
                          {"type": "symbol", "symbol": name, "file_suffix": suffix}, corpus))
    return tasks


def qrels(tasks: list[Task], symbols: list[Symbol]) -> dict[str, list[str]]:
    """Every symbol that counts as a hit for each task (so recall and TREC tools see the same gold)."""
    return {t.task_id: [docid(Hit(s.path, s.name, s.kind, s.start_line, s.end_line, 0.0))
                        for s in relevant_symbols(t.gold, symbols)] for t in tasks}
