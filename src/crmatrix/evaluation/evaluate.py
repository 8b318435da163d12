"""Running one dataset against one system under one arm, and scoring every method.

Besides ranks, each query records what an agent would pay to read the answer: the bytes
and cl100k tokens of the first `RESPONSE_HITS` hits as JSON (a blob system's text), and
how it failed, if it did. Every call into the system goes through a `Guard`, so a hung
system costs a timeout, never the job.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from functools import cached_property

import numpy as np

from crmatrix import CrmatrixError
from crmatrix.atomic import dumps_canonical
from crmatrix.datasets.relevance import file_level, gold_units, ranked_units, relevant_ranks
from crmatrix.datasets.tasks import Task
from crmatrix.evaluation import accounting, granularity, metrics, tokenbench
from crmatrix.evaluation.tokens import count_tokens
from crmatrix.hits import Hit, docid
from crmatrix.progress import Progress
from crmatrix.symbols import Symbol
from crmatrix.symbols import paths as symbol_paths
from crmatrix.systems.answers import BLOB, FAILURE_KINDS, RANKED, Answer, QueryFailure
from crmatrix.systems.guard import Guard
from crmatrix.systems.registry import System, SystemContext, make_system

RESPONSE_HITS = 10
CLOSE_TIMEOUT_S = 30.0
# A method whose first FAIL_FAST calls (queries, or batches of them) all fail with one kind and one
# message is misconfigured (a wrong `hits` path, argv or program), not unlucky: the rest are not
# asked. Timeouts are left out (a loaded machine or a cold start can make the first ones overrun),
# and so is `budget`. A method whose first FAIL_FAST answers each list hits, none of which names
# anything of the corpus, stops too (a `fields` mapping that finds nothing, paths of another root).
FAIL_FAST = 3
FAIL_FAST_KINDS = ("crash", "bad-output", "empty")


def response_size(hits: list[Hit], text: str | None = None) -> tuple[int, int]:
    """What an agent reads: a blob system's text, else the first RESPONSE_HITS hits as JSON."""
    if text is None:
        text = dumps_canonical([h.to_dict() for h in hits[:RESPONSE_HITS]])
    return len(text.encode()), count_tokens(text)


def _query_row(task: Task, outcome: Outcome, units: list[tuple[str, bool]], n_relevant: int, blob: bool,
               named: str | None) -> dict:
    """`units`: the hits in the gold's units (`ranked_units`): files for file-level gold (a
    symbol hit counts for its file); `named`: the answer's `outcome` when it named nothing of
    the corpus (accounting.answered)."""
    hits, text, elapsed_ms, failure, excerpt = outcome
    size = response_size(hits, text)
    ranks = relevant_ranks(units, blob)
    return {
        "task_id": task.task_id,
        "query": task.query,
        "query_type": task.query_type,
        "gold": task.gold,
        "rank": ranks[0] if ranks else None,
        "relevant_ranks": ranks,
        "n_relevant": n_relevant,
        "hits": len(hits),
        "top_candidate": hits[0].to_dict() if hits else None,
        "elapsed_ms": round(elapsed_ms, 3),
        "response_bytes": size[0],
        "response_tokens": size[1],
        "error": str(failure) if failure else None,
        "failure": failure.kind if failure else None,
        **({"stratum": task.stratum} if task.stratum else {}),
        **({"outcome": named} if named else {}),
        **({"excerpt": excerpt} if excerpt is not None else {}),
    }


def _summary(values: list[float]) -> dict:
    a = np.asarray(values, dtype=float)
    return {"mean": float(a.mean()) if a.size else 0.0, "p95": float(np.percentile(a, 95)) if a.size else 0.0}


# One query's outcome: hits, the text read instead of the hits (or None), ms, failure (or None),
# the raw answer's first bytes (None: the system keeps none, or it failed).
Outcome = tuple[list[Hit], str | None, float, QueryFailure | None, str | None]


def _as_failure(e: BaseException) -> QueryFailure:
    if isinstance(e, QueryFailure):
        return e
    return QueryFailure("timeout" if isinstance(e, TimeoutError) else "crash", f"{type(e).__name__}: {e}")


def _answer(result) -> tuple[list[Hit], str | None, str | None]:
    if isinstance(result, Answer):
        return result.hits, result.text, result.excerpt
    if isinstance(result, list) and all(isinstance(h, Hit) for h in result):
        return result, None, None
    raise QueryFailure("bad-output", f"search returned {type(result).__name__}, expected a list of Hit or an Answer")


def _ask(system: System, guard: Guard, query: str, method: str, k: int) -> Outcome:
    try:
        hits, text, excerpt = _answer(guard.call(system.search, query, method, k))
        return hits, text, guard.last_elapsed_s * 1000, None, excerpt
    except Exception as e:
        return [], None, guard.last_elapsed_s * 1000, _as_failure(e), None


def _ask_batch(system: System, guard: Guard, queries: list[str], method: str, k: int) -> list[Outcome]:
    """One call for many queries; each is charged an equal share of its time."""
    try:
        results = guard.call(system.search_batch, queries, method, k, timeout_s=guard.timeout_s * len(queries),
                             what="batch search")
        if len(results) != len(queries):
            raise QueryFailure("bad-output", f"batch: {len(results)} results for {len(queries)} queries")
    except Exception as e:
        return [([], None, guard.last_elapsed_s * 1000 / len(queries), _as_failure(e), None)] * len(queries)
    share = guard.last_elapsed_s * 1000 / len(queries)
    out: list[Outcome] = []
    for r in results:
        try:
            if isinstance(r, BaseException):
                raise r
            hits, text, excerpt = _answer(r)
            out.append((hits, text, share, None, excerpt))
        except Exception as e:
            out.append(([], None, share, _as_failure(e), None))
    return out


def _same_failure(rows: list[dict]) -> bool:
    """Whether every row failed with one kind and one message, of a kind that says the system is
    misconfigured (FAIL_FAST_KINDS)."""
    return rows[0]["failure"] in FAIL_FAST_KINDS and all(
        (r["failure"], r["error"]) == (rows[0]["failure"], rows[0]["error"]) for r in rows)


def _named(hit: Hit) -> str:
    """A hit as the system answered it, for a message: its path, symbol and line as far as it has them."""
    parts = [f"path {hit.path!r}" if hit.path else "no path"]
    parts += [f"symbol {hit.symbol!r}"] if hit.symbol else []
    parts += [f"line {hit.start_line}"] if hit.start_line else []
    return ", ".join(parts)


def _names_nothing(method: str, tops: list[Hit | None], total: int) -> str | None:
    """Why to stop when the first FAIL_FAST answers each list hits and none names anything of the
    corpus (`tops`: per answer so far, the top hit of such an answer, else None); else None."""
    if len(tops) < FAIL_FAST or any(t is None for t in tops[:FAIL_FAST]):
        return None
    left = total - len(tops)
    files = "" if tops[0].symbol else "; a tool answering files declares `granularity: file`"
    return (f"method {method}: the first {FAIL_FAST} answers name nothing of the corpus (no hit is one of its "
            f"symbols or files){f', the other {left} were not asked' if left else ''}; the first answer's top "
            f"hit: {_named(tops[0])} (check the system's `hits` and `fields`, or what it answers{files})")


class CorpusUnits:
    """What a hit may resolve to in the corpus: a symbol (by docid) or, for file-level gold, a file."""

    def __init__(self, symbols: Sequence[Symbol]):
        self._corpus = symbols

    # each worked out when first asked: a file-level dataset never needs the symbols' docids
    @cached_property
    def symbols(self) -> set[str]:
        return {docid(Hit(s.path, s.name, s.kind, s.start_line, s.end_line, 0.0)) for s in self._corpus}

    @cached_property
    def files(self) -> set[str]:
        return set(symbol_paths(self._corpus))

    def resolves(self, gold: dict, judged: list[tuple[str, bool]]) -> bool:
        """Whether any of an answer's judged units (`ranked_units`) is a unit of the corpus."""
        known = self.files if file_level(gold) else self.symbols
        return any(unit in known for unit, _ in judged)


def ask(system: System, tasks: list[Task], n_relevant: dict[str, int], method: str, k: int,
        guard: Guard | None = None, units: CorpusUnits | None = None, file_golds: dict[str, dict | None] | None = None
        ) -> tuple[list[dict], dict[str, list[str]], set[str]]:
    """Score one method; a query that fails is a recorded failure (a miss, with its kind and
    message). `n_relevant` counts each task's relevant symbols in the corpus; `file_golds` a
    task's gold files when its gold is finer (`relevance.file_gold`): its row is scored at file
    level too (`granularity.file_level`), and for a method declared to answer files a hit naming
    a file of the corpus resolves. An answer listing
    no hit is `empty`; with `units`, one none of whose hits is a symbol (or file) of the corpus
    is `unresolved` (`accounting`): a field mapping that resolves nothing, or a tool answering
    `[]`, would otherwise score 0 unremarked. Returns the query rows, the ranked docids per task
    (files, for file-level gold), for the TREC run file, and the paths of unresolved answers'
    hits that are no file of the corpus. A method whose first FAIL_FAST queries fail alike
    raises (the others are not asked): no run is written, so a query not asked is never scored
    as a miss; and so does one whose first FAIL_FAST answers are all unresolved."""
    guard = guard or Guard()
    outside: set[str] = set()
    tops: list[Hit | None] = []  # per answer, its top hit when it is unresolved (for the early stop)
    blob = system.RESPONSE == BLOB
    batch = system.batch_size
    by_file = granularity.declares_files(system, method)
    rows, ranked = [], {}
    progress = Progress(f"{method}: querying", len(tasks), "queries")
    for calls, start in enumerate(range(0, len(tasks), batch or 1), 1):
        chunk = tasks[start:start + (batch or 1)]
        if guard.spent():
            spent = QueryFailure("budget", f"not asked: the job's budget of {guard.budget_s:g} s is spent")
            outcomes = [([], None, 0.0, spent, None)] * len(chunk)
        elif batch:
            outcomes = _ask_batch(system, guard, [t.query for t in chunk], method, k)
        else:
            outcomes = [_ask(system, guard, chunk[0].query, method, k)]
        for task, outcome in zip(chunk, outcomes, strict=True):
            judged = ranked_units(task.gold, outcome[0])
            ranked[task.task_id] = [unit for unit, _ in judged]
            files, named = (file_golds or {}).get(task.task_id), None
            if outcome[3] is None:
                resolves = units is None or units.resolves(task.gold, judged) or (
                    by_file and files is not None and units.resolves(files, ranked_units(files, outcome[0])))
                named = accounting.answered(len(outcome[0]), any(relevant for _, relevant in judged), resolves)
            if named == "unresolved":
                outside.update(h.path for h in outcome[0] if h.path not in units.files)
            tops.append(outcome[0][0] if named == "unresolved" else None)
            rows.append(_query_row(task, outcome, judged, n_relevant[task.task_id], blob, named))
            if files is not None:
                rows[-1]["file_level"] = granularity.file_level(files, outcome[0], blob)
        progress.advance(len(chunk))  # after the guard's clock stopped: never part of a query's latency
        stop = None
        if calls >= FAIL_FAST and len(rows) < len(tasks) and _same_failure(rows):
            stop = (f"method {method}: the first {len(rows)} queries failed alike, the other "
                    f"{len(tasks) - len(rows)} were not run; the first: {rows[0]['error']}")
        elif len(rows) - len(chunk) < FAIL_FAST:  # decided by the chunk that completes the first FAIL_FAST
            stop = _names_nothing(method, tops, len(tasks))
        if stop:
            progress.close()
            raise CrmatrixError(stop)
    progress.close()
    return rows, ranked, outside


def method_result(system: System, rows: list[dict], method: str, outside: frozenset[str] = frozenset(),
                  corpus_path: str | None = None) -> dict:
    """A method's results from its query rows: metrics (a blob's at rank 1 only) and the same at
    file level (`file_metrics`), what its hits name (`granularity`), latency,
    response sizes, failures by kind, the answers naming nothing of the corpus by outcome and,
    when they are most of them, why (`accounting.cause`, given the paths `outside` the corpus
    its unresolved answers named and a `corpus_path` to compare them with). A method that fails
    every query raises: a system that fails every query is broken, not bad at search."""
    blob = system.RESPONSE == BLOB
    failed = [r for r in rows if r["failure"]]
    asked = [r for r in rows if r["failure"] != "budget"]
    if asked and all(r["failure"] for r in asked):  # a system that fails every query is broken, not bad at search
        raise CrmatrixError(f"method {method}: every query failed; the first: {asked[0]['error']}")
    summary, by_type = metrics.summarize(rows), metrics.by_query_type(rows)
    named, warn = accounting.counts(rows), accounting.warns(rows)
    if blob:
        summary, by_type = metrics.rank1_only(summary), {qt: metrics.rank1_only(m) for qt, m in by_type.items()}
    return {
        "metrics": summary,
        "by_query_type": by_type,
        "response": BLOB if blob else RANKED,
        "latency_ms": metrics.latency([r["elapsed_ms"] for r in rows]),
        "response_bytes": _summary([r["response_bytes"] for r in rows]),
        "response_tokens": _summary([r["response_tokens"] for r in rows]),
        "errors": len(failed),
        "failures": {kind: sum(r["failure"] == kind for r in rows) for kind in FAILURE_KINDS},
        "no_hit": sum(named.values()),
        "no_hit_warning": warn,
        "queries": rows,
        "granularity": granularity.of(system, method, rows),
        "file_metrics": granularity.file_metrics(rows, blob),
        **{o: n for o, n in named.items() if n},
        **({"no_hit_cause": accounting.cause(rows, set(outside), corpus_path, system.ctx.options)}
           if warn else {}),
    }


def evaluate(system: System, tasks: list[Task], symbols: list[Symbol], methods: list[str], k: int,
             guard: Guard | None = None, grep: dict[str, dict] | None = None
             ) -> tuple[dict, dict[str, dict[str, list[str]]], float]:
    """Results per method, ranked docids per method and task, and the seconds spent preparing.
    With `grep` (tokenbench.grep_and_read per task), each method also gets its token efficiency.

    Tasks whose corpora are versions of one (a repository at each task's commit) are asked
    version by version, every method at each (`System.select` switches the system to it and
    gives its symbols; None: the system answers for `symbols` alone); the rows keep the tasks' order."""
    guard = guard or Guard()
    try:  # e.g. embed every query once, outside the timed searches
        guard.call(system.prepare, [t.query for t in tasks], timeout_s=guard.remaining_s(), what="prepare")
    except QueryFailure as e:
        raise CrmatrixError(f"prepare: {e}") from None
    prepare_s = guard.last_elapsed_s
    asked: dict[str, tuple[list[dict], dict[str, list[str]], set[str]]] = {m: ([], {}, set()) for m in methods}
    corpus_path = None  # a path of the corpus, that a warning compares the paths outside it with
    for corpus, group in _versions(tasks).items():
        own = system.select(corpus)
        syms = symbols if own is None else own
        gold = gold_units(group, syms)  # the same for every method
        n_relevant = {task: len(ids) for task, (ids, _) in gold.items()}
        file_golds = {task: files for task, (_, files) in gold.items()}
        units = CorpusUnits(syms)
        for m in methods:
            rows, ranked, outside = ask(system, group, n_relevant, m, k, guard, units, file_golds)
            asked[m] = (asked[m][0] + rows, {**asked[m][1], **ranked}, asked[m][2] | outside)
            if outside and corpus_path is None:
                corpus_path = min(units.files, default=None)
    order = {t.task_id: i for i, t in enumerate(tasks)}
    results, ranked = {}, {}
    for m, (rows, by_task, outside) in asked.items():
        results[m] = method_result(system, sorted(rows, key=lambda r: order[r["task_id"]]), m, frozenset(outside),
                                   corpus_path)
        ranked[m] = {t.task_id: by_task[t.task_id] for t in tasks}
        if grep is not None:
            tokenbench.annotate(results[m], grep, RESPONSE_HITS)
    return results, ranked, round(prepare_s, 3)


def _versions(tasks: list[Task]) -> dict[str, list[Task]]:
    """The tasks by the corpus each names, in order of first appearance."""
    out: dict[str, list[Task]] = {}
    for t in tasks:
        out.setdefault(t.corpus, []).append(t)
    return out


def outcome_lines(where: str, results: dict, methods: list[str]) -> tuple[str, list[str]]:
    """What a run tells its user in one line: its failure counts and the first failure's
    message; and a warning per method whose answers mostly resolved no hit, naming its cause."""
    counts = dict.fromkeys(FAILURE_KINDS, 0)
    first, asked = None, 0
    for m in methods:
        r = results[m]
        asked += len(r["queries"])
        for kind, n in r["failures"].items():
            counts[kind] += n
        named = f"method {m}: " if len(methods) > 1 else ""  # an error names the call, not the method
        first = first or next((named + q["error"] for q in r["queries"] if q["failure"]), None)
    failed = sum(counts.values())
    per = f" ({len(methods)} methods)" if len(methods) > 1 else ""
    if failed:
        kinds = ", ".join(f"{n} {kind}" for kind, n in counts.items() if n)
        line = f"{where}: {failed} of {asked} queries{per} failed ({kinds}); the first: {first}"
    else:
        line = f"{where}: {asked} queries{per}, none failed"
    warnings = [f"{where}: ⚠ {results[m]['no_hit']} answers resolved no hit (method {m}: "
                f"{results[m].get('empty', 0)} empty, {results[m].get('unresolved', 0)} unresolved; "
                f"{results[m]['no_hit_cause']})" for m in methods if results[m]["no_hit_warning"]]
    return line, warnings


def start_system(spec, ctx: SystemContext, guard: Guard) -> System:
    """Construct the system on the guard's worker (a plugin's constructor may hang too), within the budget."""
    try:
        sysobj = guard.call(make_system, spec, ctx, timeout_s=guard.remaining_s(), what="start")
    except QueryFailure as e:
        raise CrmatrixError(f"systems.{ctx.name}: {e}") from None
    guard.for_system(sysobj)
    return sysobj


def stop_system(sysobj: System, guard: Guard) -> None:
    """`close()` (an MCP server's shutdown, a temporary HOME's removal), bounded; a system that
    will not close costs a log line, not the run, but one that wrote into its corpus stops the job
    (crmatrix.systems.isolation)."""
    try:
        guard.call(sysobj.close, timeout_s=CLOSE_TIMEOUT_S, what="close")
    except CrmatrixError:
        raise
    except Exception as e:
        logging.getLogger(__name__).warning("system %s did not close cleanly: %s", type(sysobj).__name__, e)
    finally:
        guard.close()

