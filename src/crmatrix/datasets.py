"""Query datasets: one loader per format, registered by name, each yielding validated tasks.

A task is `{task_id, query, query_type, gold, corpus}`; validation happens at load time
against the corpus as indexed, so a bad row stops the run before any search is made.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
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
    stratum: str = ""  # what a split stratifies by (the repo, the library); "" is one stratum

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


@dataclass
class Loaded:
    """A format's tasks and the rows it dropped, each `{row, reason, detail}` (the codelens
    and callgraph formats drop none: a bad row stops them)."""

    tasks: list[Task]
    dropped: list[dict] = field(default_factory=list)

    def summary(self, fmt: str) -> dict:
        reasons = Counter(d["reason"] for d in self.dropped)
        return {"format": fmt, "tasks": len(self.tasks), "dropped": len(self.dropped),
                "dropped_by_reason": dict(sorted(reasons.items())), "drops": self.dropped}


def load_all(path: Path, fmt: str, corpus: str, manifest: dict, symbols: list[Symbol]) -> Loaded:
    """The tasks and the dropped rows, with their reasons."""
    if fmt not in LOADERS:
        raise CrmatrixError(f"{path}: unknown dataset format {fmt!r} (known: {', '.join(sorted(LOADERS))})")
    out = LOADERS[fmt](Path(path), corpus, manifest, symbols)
    return out if isinstance(out, Loaded) else Loaded(list(out))


def load(path: Path, fmt: str, corpus: str, manifest: dict, symbols: list[Symbol]) -> list[Task]:
    return load_all(path, fmt, corpus, manifest, symbols).tasks


def _golds(gold: dict) -> list[tuple[str, str]]:
    """(symbol, file suffix) of each answer: one for symbol gold, every edge's far end for call gold."""
    return [tuple(a) for a in gold["answers"]] if gold.get("type") == "calls" else [(gold["symbol"], gold["file_suffix"])]


def _is_gold(golds: list[tuple[str, str]], name: str, path: str) -> bool:
    """Exact symbol name and a path ending with the expected suffix (the seed's rule)."""
    return any(name == symbol and path.endswith(suffix) for symbol, suffix in golds)


def is_relevant(gold: dict, hit: Hit) -> bool:
    return _is_gold(_golds(gold), hit.symbol, hit.path)


def relevant_symbols(gold: dict, symbols: list[Symbol]) -> list[Symbol]:
    golds = _golds(gold)
    return [s for s in symbols if _is_gold(golds, s.name, s.path)]


def _query_key(query: str) -> str:
    """What makes two queries the same question: text without surrounding whitespace, case
    folded. Case is folded because every builtin method reads a query case-insensitively
    (lexical, bm25 and 2e lowercase it, MiniLM's tokenizer is uncased), so `Parse config`
    and `parse config` would be one question counted twice in the mean and the paired tests."""
    return query.strip().casefold()


@register("codelens")
def load_codelens(path: Path, corpus: str, manifest: dict, symbols: list[Symbol]) -> list[Task]:
    """JSON list of {query, expected_symbol, expected_file_suffix, query_type?}."""
    rows = _read_rows(path)
    paths = [f["path"] for f in manifest["files"]]
    by_file: dict[str, list[str]] = {}
    for s in symbols:
        by_file.setdefault(s.path, []).append(s.name)
    tasks = []
    seen: dict[str, int] = {}
    for i, row in enumerate(rows):
        where = f"{path}: row {i}"
        _check_fields(row, where, ("query", "expected_symbol", "expected_file_suffix"))
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


def _check_fields(row, where: str, keys: tuple[str, ...]) -> None:
    """A row must be an object whose `keys` are non-empty strings."""
    if not isinstance(row, dict):
        raise CrmatrixError(f"{where}: expected an object, got {type(row).__name__}")
    for key in keys:
        if not isinstance(row.get(key), str) or not row[key].strip():
            raise CrmatrixError(f"{where}: field '{key}' must be a non-empty string, got {row.get(key)!r}")


def _read_rows(path: Path) -> list:
    try:
        rows = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CrmatrixError(f"{path}: not readable as JSON: {e}") from e
    if not isinstance(rows, list) or not rows:
        raise CrmatrixError(f"{path}: expected a non-empty JSON list of objects")
    return rows


@register("callgraph")
def load_callgraph(path: Path, corpus: str, manifest: dict, symbols: list[Symbol]) -> list[Task]:
    """JSON list of gold call edges {caller, callee, file}: `file` is the suffix of the
    caller's file, the callee is named only. Becomes one `callees` task per caller (gold:
    the names it calls) and one `callers` task per callee (gold: its callers and their files)."""
    rows = _read_rows(path)
    names = {s.name for s in symbols}
    callees: dict[tuple[str, str], set] = {}
    callers: dict[str, set] = {}
    for i, row in enumerate(rows):
        where = f"{path}: row {i}"
        _check_fields(row, where, ("caller", "callee", "file"))
        caller, callee, suffix = row["caller"], row["callee"], row["file"]
        if not any(s.name == caller and s.path.endswith(suffix) for s in symbols):
            raise CrmatrixError(f"{where}: field 'caller' {caller!r} is not a symbol of a file ending with {suffix!r}")
        if callee not in names:
            raise CrmatrixError(f"{where}: field 'callee' {callee!r} is not a symbol of corpus {corpus!r}")
        callees.setdefault((caller, suffix), set()).add((callee, ""))
        callers.setdefault(callee, set()).add((caller, suffix))
    tasks = [Task(f"callees:{suffix}:{caller}", caller, "callees",
                  {"type": "calls", "symbol": caller, "file_suffix": suffix, "answers": sorted(map(list, gold))}, corpus)
             for (caller, suffix), gold in sorted(callees.items())]
    tasks += [Task(f"callers:{callee}", callee, "callers",
                   {"type": "calls", "symbol": callee, "file_suffix": None, "answers": sorted(map(list, gold))}, corpus)
              for callee, gold in sorted(callers.items())]
    return tasks
