"""Query datasets: a registry of formats, one module each, every one yielding validated tasks.

A task is `{task_id, query, query_type, gold, corpus, stratum}`; validation happens at load
time against the corpus as indexed, so a bad row stops the run before any search is made.
A format may also drop rows it cannot use (a public benchmark's citation that names no file
of the pinned tree): each drop is counted with its reason, never silent.

Adding a format is one module here with a `@register("name")` loader (named in the import
at the end of this file, so that importing the package registers it), or, from another
package, an entry point in the group `crmatrix.datasets` naming its loader. A loader is
`(path, corpus, manifest, symbols) -> Loaded | list[Task]`.

Gold comes in kinds, each with its relevance rule (`is_relevant`) and unit of ranking:
- `symbol` (codelens): exact symbol name, path ending with the file suffix;
- `calls` (callgraph): one of the edge ends;
- `needle` (repoqa): a corpus function AST-equivalent to the needle, found at load time;
- `docs` (ds1000): a corpus document with the gold id or fuzzily equal content, found at load time;
- `file_set` (swe-qa): the gold files; ranked by file, a symbol hit counting for its file.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path

from crmatrix import CrmatrixError
from crmatrix.hits import Hit, docid
from crmatrix.symbols import Symbol
from crmatrix.tasks import Task, read_tasks  # noqa: F401 - re-exported: the API of datasets

QUERY_TYPES = ("natural_language", "short_phrase", "identifier", "issue_to_edit")
UNCATEGORIZED = "uncategorized"
ENTRY_POINT_GROUP = "crmatrix.datasets"


@dataclass
class Loaded:
    """A format's tasks and the rows (or citations) it dropped, each `{row, reason, detail}`."""

    tasks: list[Task]
    dropped: list[dict] = field(default_factory=list)

    def summary(self, fmt: str) -> dict:
        """What the dataset stage reports: counts of tasks, of drops by reason, and each drop."""
        reasons = Counter(d["reason"] for d in self.dropped)
        return {"format": fmt, "tasks": len(self.tasks), "dropped": len(self.dropped),
                "dropped_by_reason": dict(sorted(reasons.items())), "drops": self.dropped}


Loader = Callable[[Path, str, dict, list[Symbol]], "Loaded | list[Task]"]
LOADERS: dict[str, Loader] = {}


def register(name: str) -> Callable[[Loader], Loader]:
    def deco(fn: Loader) -> Loader:
        LOADERS[name] = fn
        return fn

    return deco


def _loader(fmt: str, path: Path) -> Loader:
    if fmt not in LOADERS:
        for ep in entry_points(group=ENTRY_POINT_GROUP, name=fmt):
            LOADERS[fmt] = ep.load()
    if fmt not in LOADERS:
        raise CrmatrixError(f"{path}: unknown dataset format {fmt!r} (known: {', '.join(sorted(LOADERS))})")
    return LOADERS[fmt]


def load_all(path: Path, fmt: str, corpus: str, manifest: dict, symbols: list[Symbol]) -> Loaded:
    """The tasks and the dropped rows, with their reasons."""
    out = _loader(fmt, path)(Path(path), corpus, manifest, symbols)
    loaded = out if isinstance(out, Loaded) else Loaded(list(out))
    if not loaded.tasks:
        reasons = ", ".join(f"{n} {r}" for r, n in loaded.summary(fmt)["dropped_by_reason"].items())
        raise CrmatrixError(f"{path}: no task left for corpus {corpus!r}" + (f" (dropped: {reasons})" if reasons else ""))
    return loaded


def load(path: Path, fmt: str, corpus: str, manifest: dict, symbols: list[Symbol]) -> list[Task]:
    return load_all(path, fmt, corpus, manifest, symbols).tasks


# --- relevance ---------------------------------------------------------------------------------

def file_level(gold: dict) -> bool:
    """Whether the gold is a set of files: hits are then ranked as the files they are in."""
    return gold.get("type") == "file_set"


def _golds(gold: dict) -> list[tuple[str, str]]:
    """(symbol, file suffix) of each answer: one for symbol gold, every edge's far end for call gold."""
    return [tuple(a) for a in gold["answers"]] if gold.get("type") == "calls" else [(gold["symbol"], gold["file_suffix"])]


def _is_gold(golds: list[tuple[str, str]], name: str, path: str) -> bool:
    """Exact symbol name and a path ending with the expected suffix (the seed's rule)."""
    return any(name == symbol and path.endswith(suffix) for symbol, suffix in golds)


def _in_span(span: list, path: str, name: str, start: int, end: int) -> bool:
    """The same function as a gold span [path, name, start, end]: its file and name, lines
    overlapping (a system may count a decorator or a doc comment in or out)."""
    s_path, s_name, s_start, s_end = span
    return path == s_path and name == s_name and start <= s_end and end >= s_start


def is_relevant(gold: dict, hit: Hit) -> bool:
    kind = gold.get("type")
    if kind == "file_set":
        return hit.path in gold["file_set"]
    if kind == "docs":
        return hit.path in gold["documents"]
    if kind == "needle":
        return any(_in_span(s, hit.path, hit.symbol, hit.start_line, hit.end_line) for s in gold["equivalent"])
    return _is_gold(_golds(gold), hit.symbol, hit.path)


def relevant_symbols(gold: dict, symbols: list[Symbol]) -> list[Symbol]:
    """The corpus symbols a hit on which is relevant (for file gold: every symbol of a gold file)."""
    kind = gold.get("type")
    if kind in ("file_set", "docs", "needle"):
        return [s for s in symbols if is_relevant(gold, Hit(s.path, s.name, s.kind, s.start_line, s.end_line, 0.0))]
    golds = _golds(gold)
    return [s for s in symbols if _is_gold(golds, s.name, s.path)]


def relevant_ids(gold: dict, symbols: list[Symbol]) -> list[str]:
    """What there is to find, in ranking units: the gold files, or the relevant symbols' docids."""
    if file_level(gold):
        return sorted(gold["file_set"])
    return [docid(Hit(s.path, s.name, s.kind, s.start_line, s.end_line, 0.0)) for s in relevant_symbols(gold, symbols)]


def ranked_units(gold: dict, hits: list[Hit]) -> list[tuple[str, bool]]:
    """The hits as the units the gold is judged in, in rank order, each with its relevance:
    files for file gold (each file at its first hit's rank), else one symbol per hit."""
    if not file_level(gold):
        return [(docid(h), is_relevant(gold, h)) for h in hits]
    files = dict.fromkeys(h.path for h in hits)
    return [(p, p in gold["file_set"]) for p in files]


def qrels(tasks: list[Task], symbols: list[Symbol]) -> dict[str, list[str]]:
    """Everything that counts as a hit for each task (so recall and TREC tools see the same gold)."""
    return {t.task_id: relevant_ids(t.gold, symbols) for t in tasks}


# --- helpers the formats share -----------------------------------------------------------------

def query_key(query: str) -> str:
    """What makes two queries the same question: text without surrounding whitespace, case
    folded. Case is folded because every builtin method reads a query case-insensitively
    (lexical, bm25 and 2e lowercase it, MiniLM's tokenizer is uncased), so `Parse config`
    and `parse config` would be one question counted twice in the mean and the paired tests."""
    return query.strip().casefold()


def check_fields(row, where: str, keys: tuple[str, ...]) -> None:
    """A row must be an object whose `keys` are non-empty strings."""
    if not isinstance(row, dict):
        raise CrmatrixError(f"{where}: expected an object, got {type(row).__name__}")
    for key in keys:
        if not isinstance(row.get(key), str) or not row[key].strip():
            raise CrmatrixError(f"{where}: field '{key}' must be a non-empty string, got {row.get(key)!r}")


def corpus_repo(manifest: dict, corpus: str) -> str:
    """The repository a corpus holds: a written-out corpus's `repo`, `owner/name` of a git
    corpus (from its URL), else the pinned package's or the corpus's name."""
    pin = manifest.get("pin", {})
    spec = pin.get(pin.get("kind"))
    if isinstance(spec, dict):  # written out from a benchmark file (crmatrix.corpus)
        return spec.get("repo", corpus)
    if pin.get("kind") == "git":
        parts = [p for p in re.split(r"[/:]", pin["git"].rstrip("/")) if p]
        parts[-1] = parts[-1].removesuffix(".git")
        return "/".join(parts[-2:])
    if pin.get("kind") == "pypi":
        return re.split(r"[=<>\[ ]", pin["pypi"], maxsplit=1)[0]
    return corpus


def read_rows(path: Path) -> list:
    """A hand-built dataset: a non-empty JSON list (read as it is, so a bad row is named as written)."""
    try:
        rows = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CrmatrixError(f"{path}: not readable as JSON: {e}") from e
    if not isinstance(rows, list) or not rows:
        raise CrmatrixError(f"{path}: expected a non-empty JSON list of objects")
    return rows


# The formats register themselves when imported. The import is written out, not looped over
# FORMATS, so that crmatrix.codehash sees every format module a dataset stage runs (an edit
# of one re-runs the dataset stages).
from crmatrix.datasets import callgraph, codelens, ds1000, repoqa, sweqa  # noqa: E402,F401
