"""Which hits are relevant to a task's gold, in the units the gold is judged in (symbols or
files): the one relevance rule every metric, qrels file and token count uses."""

from __future__ import annotations

from collections.abc import Callable

from crmatrix.datasets.tasks import Task
from crmatrix.hits import Hit, docid
from crmatrix.symbols import Symbol
from crmatrix.symbols import paths as symbol_paths

# Gold given as definitions' spans [path, name, start, end]: a RepoQA needle and its copies,
# or the definitions DS-1000's gold docs document (ds1000-library).
SPAN_KINDS = ("needle", "definitions")


def file_level(gold: dict) -> bool:
    """Whether the gold is a set of files: hits are then ranked as the files they are in."""
    return gold.get("type") == "file_set"


def _golds(gold: dict) -> list[tuple[str, str]]:
    """(symbol, file suffix) of each answer: one for symbol gold, every edge's far end for call gold."""
    if gold.get("type") == "calls":
        return [tuple(a) for a in gold["answers"]]
    return [(gold["symbol"], gold["file_suffix"])]


def _is_gold(golds: list[tuple[str, str]], name: str, path: str) -> bool:
    """Exact symbol name and a path ending with the expected suffix (the seed's rule)."""
    return any(name == symbol and path.endswith(suffix) for symbol, suffix in golds)


def _in_span(span: list, path: str, name: str, start: int, end: int) -> bool:
    """The same function as a gold span [path, name, start, end]: its file and name, lines
    overlapping (a system may count a decorator or a doc comment in or out)."""
    s_path, s_name, s_start, s_end = span
    return path == s_path and name == s_name and start <= s_end and end >= s_start


def _spans(gold: dict) -> list[list]:
    """The gold spans [path, name, start, end]: a needle's equivalents, or the definitions."""
    return gold["equivalent"] if gold.get("type") == "needle" else gold["definitions"]


def relevance(gold: dict) -> Callable[[Hit], bool]:
    """Whether a hit is relevant to `gold`: its rule by kind of gold, the gold read once for the
    many hits of a ranking (a name that no answer has settles a symbol hit at one set lookup)."""
    kind = gold.get("type")
    if kind in ("file_set", "docs"):
        paths = gold["file_set"] if kind == "file_set" else gold["documents"]
        return lambda hit: hit.path in paths
    if kind in SPAN_KINDS:
        spans = _spans(gold)
        return lambda hit: any(_in_span(s, hit.path, hit.symbol, hit.start_line, hit.end_line) for s in spans)
    golds = _golds(gold)
    names = {symbol for symbol, _ in golds}
    return lambda hit: hit.symbol in names and _is_gold(golds, hit.symbol, hit.path)


def is_relevant(gold: dict, hit: Hit) -> bool:
    return relevance(gold)(hit)


def relevant_symbols(gold: dict, symbols: list[Symbol]) -> list[Symbol]:
    """The corpus symbols a hit on which is relevant (for file gold: every symbol of a gold file)."""
    kind = gold.get("type")
    if kind in ("file_set", "docs", *SPAN_KINDS):
        relevant = relevance(gold)
        return [s for s in symbols if relevant(Hit(s.path, s.name, s.kind, s.start_line, s.end_line, 0.0))]
    golds = _golds(gold)
    return [s for s in symbols if _is_gold(golds, s.name, s.path)]


def relevant_ids(gold: dict, symbols: list[Symbol]) -> list[str]:
    """What there is to find, in ranking units: the gold files, or the relevant symbols' docids.
    Like a gold file, a gold definition the corpus lacks still counts, by its span's own docid
    (swe-bench's in a file its candidate rule leaves out): no system can rank it, so its task is
    a miss at every k, as the field scores it."""
    if file_level(gold):
        return sorted(gold["file_set"])
    found = relevant_symbols(gold, symbols)
    ids = [docid(Hit(s.path, s.name, s.kind, s.start_line, s.end_line, 0.0)) for s in found]
    if gold.get("type") == "definitions":
        ids += [docid(Hit(path, name, "function", start, end, 0.0)) for path, name, start, end in gold["definitions"]
                if not any(_in_span([path, name, start, end], s.path, s.name, s.start_line, s.end_line)
                           for s in found)]
    return ids


def ranked_units(gold: dict, hits: list[Hit]) -> list[tuple[str, bool]]:
    """The hits as the units the gold is judged in, in rank order, each with its relevance:
    files for file gold (each file at its first hit's rank), else one symbol per hit."""
    if not file_level(gold):
        relevant = relevance(gold)
        return [(docid(h), relevant(h)) for h in hits]
    files = dict.fromkeys(h.path for h in hits)
    return [(p, p in gold["file_set"]) for p in files]


def relevant_ranks(units: list[tuple[str, bool]], blob: bool) -> list[int]:
    """The 1-based ranks of the relevant units (`ranked_units`); a blob answer (one composed
    context) has the gold in it, at rank 1, or not."""
    ranks = [i for i, (_, relevant) in enumerate(units, 1) if relevant]
    if blob:
        return [1] if ranks else []
    return ranks


def _keys(gold: dict) -> tuple[str, list[str]]:
    """What a relevant symbol must have, by kind of gold: one of these names, or one of these paths."""
    kind = gold.get("type")
    if kind == "file_set":
        return "path", list(gold["file_set"])
    if kind == "docs":
        return "path", list(gold["documents"])
    if kind in SPAN_KINDS:
        return "path", [span[0] for span in _spans(gold)]
    return "name", [name for name, _ in _golds(gold)]


def file_gold(gold: dict, relevant: list[Symbol]) -> dict | None:
    """The gold at file level, for a gold finer than files: the files of its relevant symbols (a
    symbol's file is its path) as a `file_set` gold, so `ranked_units` ranks hits as these files;
    None for a gold of files already."""
    if file_level(gold):
        return None
    return {"type": "file_set", "file_set": sorted({s.path for s in relevant})}


def relevant_by_task(tasks: list[Task], symbols: list[Symbol]) -> dict[str, list[Symbol]]:
    """Each task's relevant symbols (`relevant_symbols`), in corpus order. Each task looks at the
    symbols of its gold's names or paths only, so a dataset of hundreds of tasks costs one pass
    over the corpus per field their golds name, not one per task."""
    wanted = {t.task_id: _keys(t.gold) for t in tasks}
    positions: dict[tuple[str, str], list[int]] = {}
    for field in sorted({field for field, _ in wanted.values()}):
        values = symbol_paths(symbols) if field == "path" else [getattr(s, field) for s in symbols]
        for i, value in enumerate(values):
            positions.setdefault((field, value), []).append(i)
    out = {}
    for t in tasks:
        field, keys = wanted[t.task_id]
        candidates = sorted({i for k in keys for i in positions.get((field, k), ())})
        out[t.task_id] = relevant_symbols(t.gold, [symbols[i] for i in candidates])
    return out


def gold_units(tasks: list[Task], symbols: list[Symbol]) -> dict[str, tuple[list[str], dict | None]]:
    """Each task's relevant ids (`relevant_ids`: everything that counts as a hit) and its gold at
    file level (`file_gold`); a gold of files looks at no symbol."""
    relevant = relevant_by_task([t for t in tasks if not file_level(t.gold)], symbols)
    return {t.task_id: (relevant_ids(t.gold, []), None) if file_level(t.gold)
            else (relevant_ids(t.gold, relevant[t.task_id]), file_gold(t.gold, relevant[t.task_id])) for t in tasks}


def qrels(tasks: list[Task], symbols: list[Symbol]) -> dict[str, list[str]]:
    """Everything that counts as a hit for each task (so recall and TREC tools see the same gold)."""
    return {task: ids for task, (ids, _) in gold_units(tasks, symbols).items()}
