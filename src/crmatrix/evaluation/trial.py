"""One query to one system, its answer laid open (`crmatrix try`): the tools it lists (an MCP
server's), the raw answer, each hit as the tool named it and what it resolved to in the corpus.

Before a matrix runs a system over a dataset, this says whether the system is wired right: a
`hits` path or `fields` mapping that reads nothing, paths of another root, a tool that answers
prose. The hits are read by the system's own adapter (`crmatrix.systems.hitmap`) and judged
against the corpus by the evaluation's own `CorpusUnits`, so what it shows is what a run scores.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from crmatrix.evaluation import accounting, granularity
from crmatrix.evaluation.evaluate import CorpusUnits, _answer, _as_failure
from crmatrix.hits import Hit, docid
from crmatrix.symbols import Symbol
from crmatrix.systems.answers import Answer, QueryFailure
from crmatrix.systems.base import System
from crmatrix.systems.guard import Guard

RAW_CHARS = 2000  # of the raw answer shown
# What a hit came to in the corpus: a symbol of it, a file of it (for a method declared to answer
# files), a file of it with no symbol at the lines named (only file-level gold counts it), a path
# that is no file of it, or no path at all.
SYMBOL, FILE, NO_SYMBOL, OUTSIDE, PATHLESS = "symbol", "file", "no-symbol", "outside", "pathless"


@dataclass(frozen=True)
class TrialHit:
    """One ranked hit: as the tool named it (`answered`), as the run ranks it (`hit`: the
    corpus's symbol it resolved to, else as named), and which of the resolutions it came to."""

    rank: int
    answered: Hit
    hit: Hit
    resolution: str

    def resolved(self) -> str:
        """What it resolved to, in words."""
        h = self.hit
        if self.resolution == SYMBOL:
            return f"symbol {h.symbol} ({h.kind}, {h.path}:{h.start_line}-{h.end_line})"
        if self.resolution == FILE:
            return f"file {h.path} (the method answers files)"
        if self.resolution == NO_SYMBOL:
            a = self.answered
            what = "at these lines" if a.start_line else "of that name in it" if a.symbol else "named, nor a line"
            return f"unresolved: no symbol {what} (the file {h.path} is in the corpus)"
        if self.resolution == OUTSIDE:
            return "unresolved: path not in the corpus"
        return "unresolved: no path"


@dataclass(frozen=True)
class Trial:
    """`tools`: what the system lists (None: it lists none); `raw`: its whole raw answer (None:
    it answers with hits, not text); `outcome`: `empty` or `unresolved` as a run would record
    it (`accounting.answered`), None when a hit names a symbol of the corpus; `failure`: the
    query's, when it failed (then no hits)."""

    query: str
    method: str
    k: int
    tools: list[dict] | None
    raw: str | None
    hits: list[TrialHit]
    outcome: str | None
    failure: QueryFailure | None


def resolution(hit: Hit, units: CorpusUnits, by_file: bool) -> str:
    """What the hit resolved to (`by_file`: the method is declared to answer files, whose hit
    naming a file of the corpus resolves, as a run counts it)."""
    if docid(hit) in units.symbols:
        return SYMBOL
    if not hit.path:
        return PATHLESS
    if hit.path in units.files:
        return FILE if by_file else NO_SYMBOL
    return OUTSIDE


def ask(system: System, guard: Guard, symbols: list[Symbol], query: str, method: str, k: int) -> Trial:
    """Ask the started `system` (prepared for the query, and guarded, as a run does) `query` by
    `method` for `k` hits, over a corpus of `symbols`."""
    tools = system.listed_tools()
    try:
        guard.call(system.prepare, [query], timeout_s=guard.remaining_s(), what="prepare")
        result = guard.call(system.search, query, method, k)
        hits, _, _ = _answer(result)
    except Exception as e:
        return Trial(query, method, k, tools, None, [], None, _as_failure(e))
    answer = result if isinstance(result, Answer) else Answer(hits)
    units, by_file = CorpusUnits(symbols), granularity.declares_files(system, method)
    found = [TrialHit(rank, answered, hit, resolution(hit, units, by_file))
             for rank, (answered, hit) in enumerate(zip(answer.answered or hits, hits, strict=True), 1)]
    resolves = any(t.resolution in (SYMBOL, FILE) for t in found)
    return Trial(query, method, k, tools, answer.raw, found, accounting.answered(len(hits), False, resolves), None)


def _lines(h: Hit) -> str:
    if not h.start_line:
        return "no lines"
    return f"line {h.start_line}" if h.end_line in (0, h.start_line) else f"lines {h.start_line}-{h.end_line}"


def render_tools(tools: list[dict]) -> list[str]:
    """The tools a system lists, each with its description and input schema."""
    out = [f"tools ({len(tools)}):"]
    for t in tools:
        out.append(f"  {t['name']}: {' '.join(t['description'].split()) or '(no description)'}")
        out.append(f"    input schema: {json.dumps(t['input_schema'], sort_keys=True, ensure_ascii=False)}")
    return out


def render(trial: Trial, system: str) -> list[str]:
    """The trial as the lines `crmatrix try` prints."""
    out = render_tools(trial.tools) if trial.tools is not None else []
    out.append(f"{system} · {trial.method} · k {trial.k} · query {trial.query!r}")
    if trial.failure is not None:
        out.append(f"failed ({trial.failure.kind}): {trial.failure}")
        return out
    if trial.raw is None:
        out.append("raw answer: none (the system answers with hits, not text)")
    else:
        shown = f"; the first {RAW_CHARS} shown" if len(trial.raw) > RAW_CHARS else ""
        out.append(f"raw answer ({len(trial.raw)} characters{shown}):")
        out += ["  " + line for line in trial.raw[:RAW_CHARS].splitlines()]
    out.append(f"hits ({len(trial.hits)}):")
    for t in trial.hits:
        a = t.answered
        named = a.symbol or "(no symbol)"
        out.append(f"  {t.rank}. {a.path or '(no path)'}  {named}  {_lines(a)}  score {a.score:g}")
        out.append(f"     -> {t.resolved()}")
    if trial.outcome == "empty":
        out.append("outcome: empty (the answer lists no hit)")
    elif trial.outcome == "unresolved":
        out.append("outcome: unresolved (no hit names a symbol or file of the corpus)")
    else:
        n = sum(t.resolution in (SYMBOL, FILE) for t in trial.hits)
        out.append(f"outcome: {n} of {len(trial.hits)} hits name a symbol or file of the corpus")
    return out

