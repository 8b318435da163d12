"""The phase matrix's rankings, each with rank resolution (`crmatrix.analysis.ranks`): the
leaderboard of its systems against the reference (a matrix of two systems or more), and each
system's arms in order of their pooled Δ against the baseline over its plain datasets.

Both read the per-query scores the cells carry (`Cell.queries`): the leaderboard the baseline
arm's cells of every system (systems as they ship, `crmatrix.analysis.versus`), an arm
ranking the cells of the system's arms; so the matrix's job reads its cells alone, no run,
and an added arm costs its own cells' statistics."""

from __future__ import annotations

from crmatrix.analysis import ranks, versus
from crmatrix.evaluation import metrics
from crmatrix.hits import FILE, SYMBOL
from crmatrix.jsontypes import members
from crmatrix.results.cell import Cell
from crmatrix.results.leaderboard import ArmRanking, Board, Leaderboard, RankedArm, Standing
from crmatrix.results.pool import PoolEntry
from crmatrix.results.row import Row

LATENCY = ("p50", "p95")


def _scores(cell: Cell, level: str = SYMBOL) -> versus.Scores:
    """The cell's scores at the gold's level, or at file level (`level` FILE)."""
    return versus.Scores(cell.method, cell.language or "?", versus.at_level(cell.queries, level))


def _by_system(cells: dict[tuple[str, str], versus.Scores]) -> dict[str, dict[str, versus.Scores]]:
    out: dict[str, dict[str, versus.Scores]] = {}
    for (d, s), c in sorted(cells.items()):
        out.setdefault(s, {})[d] = c
    return out


def leaderboard(table: dict[tuple[str, str], dict[str, Cell]], baseline: str, reference: str | None
                ) -> Leaderboard | None:
    """The systems of the baseline arm's cells in `table` ((dataset, system) -> arm -> cell)
    against `reference`, in leaderboard order, at the finest level every one answers: file level
    when a system's hits name files (its cells' `granularity`), with the board of the systems
    answering symbols beside it; None unless there are two systems or more and the reference is
    one of them."""
    base = {k: docs[baseline] for k, docs in table.items() if baseline in docs}
    systems = {s for _, s in base}
    if len(systems) < 2 or reference not in systems:
        return None
    files = {s for (_, s), c in base.items() if c.granularity == FILE}
    if not files:
        return Leaderboard(**members(_board({k: _scores(c) for k, c in base.items()}, reference)), level=SYMBOL)
    board = _board({k: _scores(c, FILE) for k, c in base.items()}, reference)
    symbols = {k: _scores(c) for k, c in base.items() if k[1] not in files}
    return Leaderboard(**members(board), level=FILE, file_systems=tuple(sorted(files)),
                       symbol_level=None if reference in files else _board(symbols, reference))


def _board(cells: dict[tuple[str, str], versus.Scores], reference: str) -> Board:
    """The systems of `cells` ((dataset, system) -> scores) against `reference`, in order."""
    by_system = _by_system(cells)
    compared = versus.compare_scored(cells, reference)
    pairs, rank = ranks.resolve(list(compared.systems), by_system)
    against = {v.system: v for v in compared.versus}
    standings = []
    for s in compared.systems:
        own = [c for c in compared.scores if c.system == s]
        failures: dict[str, int] = {}
        for c in own:
            for kind, n in c.failures.items():
                failures[kind] = failures.get(kind, 0) + n
        v = against.get(s)
        latency = metrics.latency([q.elapsed_ms for c in by_system[s].values() for q in c.queries])
        standings.append(Standing(
            system=s, method=", ".join(sorted({c.method for c in own})), rank=rank[s], datasets=len(own),
            queries=sum(c.n for c in own), mean=sum(c.mean for c in own) / len(own),
            delta=None if v is None else v.effect, pooled=None if v is None else v.pooled,
            paired=None if v is None else sum(x.n for x in v.studies), testable=None if v is None else v.testable,
            failed=sum(c.failed for c in own),
            failures=dict(sorted(failures.items())), latency_ms={k: latency[k] for k in LATENCY},
            empty=sum(c.empty for c in own), unresolved=sum(c.unresolved for c in own)))
    return Board(reference=reference, standings=tuple(standings), pairs=pairs)


def arm_rankings(table: dict[tuple[str, str], dict[str, Cell]], rows: list[Row], pooled: list[PoolEntry],
                 arms: list[str], baseline: str) -> list[ArmRanking]:
    """Per system with an arm pooled over its plain datasets: the baseline and those arms in
    order of their pooled Δ (its `overall` pool's estimate, else the mean Δ when no dataset
    varied; ties in column order), with the separation of each adjacent pair on those datasets."""
    column = {a: i for i, a in enumerate(arms)}
    out = []
    for system in sorted({r.system for r in rows}):
        effects = {}
        for e in (e for e in pooled if e.system == system):
            overall = next((g for g in e.groups if g.kind == "overall"), None)
            if overall is not None:
                deltas = [s.delta for s in e.studies if s.dataset in overall.datasets]
                effects[e.arm] = overall.pooled.estimate if overall.pooled else sum(deltas) / len(deltas)
        if not effects:
            continue
        effects = {baseline: 0.0, **effects}
        order = sorted(effects, key=lambda a: (-effects[a], column[a]))
        plain = [r.dataset for r in rows if r.system == system and not r.split]
        scores = {a: {d: _scores(table[(d, system)][a]) for d in plain if a in table[(d, system)]} for a in order}
        pairs, rank = ranks.resolve(order, scores)
        out.append(ArmRanking(system=system, datasets=tuple(plain), pairs=pairs, arms=tuple(
            RankedArm(arm=a, rank=rank[a], delta=effects[a]) for a in order)))
    return out
