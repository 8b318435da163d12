"""`codelens`: the seed's hand-built format, a JSON list of
`{query, expected_symbol, expected_file_suffix, query_type?}`; gold is one symbol."""

from __future__ import annotations

from pathlib import Path

from crmatrix import CrmatrixError
from crmatrix.datasets.registry import register
from crmatrix.datasets.rows import QUERY_TYPES, UNCATEGORIZED, check_fields, query_key, read_rows
from crmatrix.datasets.tasks import Task
from crmatrix.symbols import Symbol


@register("codelens", hand_built=True)
def load_codelens(path: Path, corpus: str, manifest: dict, symbols: list[Symbol]) -> list[Task]:
    rows = read_rows(path)
    paths = [f["path"] for f in manifest["files"]]
    by_file: dict[str, list[str]] = {}
    for s in symbols:
        by_file.setdefault(s.path, []).append(s.name)
    tasks = []
    seen: dict[str, int] = {}
    for i, row in enumerate(rows):
        where = f"{path}: row {i}"
        check_fields(row, where, ("query", "expected_symbol", "expected_file_suffix"), optional=("query_type",))
        first = seen.setdefault(query_key(row["query"]), i)
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
            raise CrmatrixError(f"{where}: field 'expected_file_suffix' {suffix!r} matches no file "
                                f"of corpus {corpus!r}")
        if not any(name in by_file.get(p, ()) for p in matching):
            near = sorted({n for p in matching for n in by_file.get(p, ())})
            raise CrmatrixError(
                f"{where}: field 'expected_symbol' {name!r} is not a symbol of {', '.join(matching[:3])}"
                f"{' ...' if len(matching) > 3 else ''} (it has {len(near)}: "
                f"{', '.join(near[:12])}{' ...' if len(near) > 12 else ''})"
            )
        tasks.append(Task(f"q{i:03d}", row["query"], qtype,
                          {"type": "symbol", "symbol": name, "file_suffix": suffix}, corpus))
    return tasks
