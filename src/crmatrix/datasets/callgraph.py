"""`callgraph`: gold call edges, a JSON list of `{caller, callee, file}` (`file`: the suffix
of the caller's file; the callee is named only). Scored by `crmatrix.evaluation.callgraph`, not in the
phase matrix."""

from __future__ import annotations

from pathlib import Path

from crmatrix import CrmatrixError
from crmatrix.datasets.registry import register
from crmatrix.datasets.rows import check_fields, read_rows
from crmatrix.datasets.tasks import Task
from crmatrix.symbols import Symbol


@register("callgraph", hand_built=True, callgraph=True)
def load_callgraph(path: Path, corpus: str, manifest: dict, symbols: list[Symbol]) -> list[Task]:
    """One `callees` task per caller (gold: the names it calls) and one `callers` task per
    callee (gold: its callers and their files)."""
    rows = read_rows(path)
    names = {s.name for s in symbols}
    callees: dict[tuple[str, str], set] = {}
    callers: dict[str, set] = {}
    for i, row in enumerate(rows):
        where = f"{path}: row {i}"
        check_fields(row, where, ("caller", "callee", "file"), optional=())
        caller, callee, suffix = row["caller"], row["callee"], row["file"]
        if not any(s.name == caller and s.path.endswith(suffix) for s in symbols):
            raise CrmatrixError(f"{where}: field 'caller' {caller!r} is not a symbol of a file ending with {suffix!r}")
        if callee not in names:
            raise CrmatrixError(f"{where}: field 'callee' {callee!r} is not a symbol of corpus {corpus!r}")
        callees.setdefault((caller, suffix), set()).add((callee, ""))
        callers.setdefault(callee, set()).add((caller, suffix))
    tasks = [Task(f"callees:{suffix}:{caller}", caller, "callees",
                  {"type": "calls", "symbol": caller, "file_suffix": suffix, "answers": sorted(map(list, gold))},
                  corpus)
             for (caller, suffix), gold in sorted(callees.items())]
    tasks += [Task(f"callers:{callee}", callee, "callers",
                   {"type": "calls", "symbol": callee, "file_suffix": None, "answers": sorted(map(list, gold))},
                   corpus)
              for callee, gold in sorted(callers.items())]
    return tasks
