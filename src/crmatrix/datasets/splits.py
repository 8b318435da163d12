"""Dataset splits derived from a base dataset (config: `split:` on a dataset).

`structural`: the answers that sit one hop from what dense retrieval finds. For each base
task whose gold the dense ranker (the baseline arm's `semantic`) places in its top
`DENSE_TOP_K`, the gold is swapped to a graph neighbour of it (a caller, callee, base or
override) that the dense ranker does not place first: of those, the one it ranks best, so
the new gold is the most plausible answer next to the original. Neighbours whose name is
not unique in their file are skipped (the gold rule could not single them out). A task
with no such neighbour is left out. Graph expansion should help on this split; an arm
whose recall@10 drops here does harm (the matrix's do-no-harm gate).

Everything follows from the base tasks, the graph and the dense ranks, so the split is the
same on every run.
"""

from __future__ import annotations

from collections import Counter

from crmatrix import CrmatrixError
from crmatrix.datasets.relevance import relevant_symbols
from crmatrix.datasets.tasks import Task
from crmatrix.engine import Engine
from crmatrix.graph import Graph

DENSE_TOP_K = 10


def derive(split: str, tasks: list[Task], symbols: list, graph: Graph, dense: Engine, where: str) -> list[Task]:
    if split != "structural":  # the config schema admits no other
        raise CrmatrixError(f"{where}: unknown split {split!r} (known: structural)")
    return structural(tasks, symbols, graph, dense, where)


def structural(tasks: list[Task], symbols: list, graph: Graph, dense: Engine, where: str) -> list[Task]:
    neighbours = graph.neighbours(symbols)
    position = {(s.path, s.start_line, s.name): i for i, s in enumerate(symbols)}
    named = Counter((s.path, s.name) for s in symbols)
    dense.prepare([t.query for t in tasks])
    out = []
    for t in tasks:
        ranked = [position[(h.path, h.start_line, h.symbol)] for h in dense.search(t.query, "semantic", len(symbols))]
        rank = {i: r for r, i in enumerate(ranked, 1)}
        gold = {position[(s.path, s.start_line, s.name)] for s in relevant_symbols(t.gold, symbols)}
        found = [i for i in ranked[:DENSE_TOP_K] if i in gold]
        if not found:
            continue
        near = [n for n in neighbours[found[0]] if n not in gold and rank[n] != 1
                and named[(symbols[n].path, symbols[n].name)] == 1]
        if not near:
            continue
        pick = symbols[min(near, key=rank.__getitem__)]
        out.append(Task(t.task_id, t.query, t.query_type,
                        {"type": "symbol", "symbol": pick.name, "file_suffix": pick.path, "derived_from": t.gold},
                        t.corpus))
    if not out:
        raise CrmatrixError(f"{where}: split structural: no task has its gold in the dense top {DENSE_TOP_K} "
                            "with a graph neighbour to swap to")
    return out
