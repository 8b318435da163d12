"""A system scored at the granularity it answers: what a method's hits name (files, symbols or
spans: `crmatrix.hits`), and every query scored at file level too.

A system declares its granularity (`System.granularity`: a class's `GRANULARITY`, an external
system's option `granularity`); undeclared, a method's answers tell: files when no answer's
first hit names a symbol. Whatever it answers, each query whose gold is finer than files is
also scored with its hits ranked as files, each file at the rank of its first hit (a file's
later hits collapse into it: `crmatrix.datasets.relevance.ranked_units`, the rule file gold has
always used), against the files of its relevant symbols; so every method of every run has every
metric at file level (`file_metrics`), and a tool answering files is ranked where it answers.
"""

from __future__ import annotations

from crmatrix import CrmatrixError
from crmatrix.datasets.relevance import ranked_units, relevant_ranks
from crmatrix.evaluation import metrics
from crmatrix.hits import FILE, GRANULARITIES, SYMBOL, Hit


def declared(system, method: str) -> str | None:
    """What the system declares the method's hits name (None: nothing), one of GRANULARITIES."""
    value = system.granularity(method)
    if value is not None and value not in GRANULARITIES:
        raise CrmatrixError(f"method {method}: granularity {value!r}: expected one of {', '.join(GRANULARITIES)}")
    return value


def of(system, method: str, rows: list[dict]) -> str:
    """What the method's hits name: what its system declares, else files when no answer's first
    hit names a symbol (a tool answering paths), else symbols."""
    value = declared(system, method)
    if value is not None:
        return value
    tops = [r["top_candidate"] for r in rows if r["top_candidate"]]
    return SYMBOL if not tops or any(t.get("symbol") for t in tops) else FILE


def declares_files(system, method: str) -> bool:
    """Whether the system declares that the method answers files (checked before any query is
    asked): a hit naming a file of the corpus then names something of it, whatever the gold
    (`crmatrix.evaluation.accounting`)."""
    return declared(system, method) == FILE


def file_level(files: dict, hits: list[Hit], blob: bool) -> dict:
    """A row's `file_level`: the hits ranked as files against the gold's files (`files`, a
    `file_set` gold: `crmatrix.datasets.relevance.file_gold`)."""
    ranks = relevant_ranks(ranked_units(files, hits), blob)
    return {"rank": ranks[0] if ranks else None, "relevant_ranks": ranks, "n_relevant": len(files["file_set"])}


def file_metrics(rows: list[dict], blob: bool) -> dict:
    """Every metric, Acc@k among them, over the rows at file level (a blob's at rank 1 only)."""
    out = metrics.summarize([metrics.file_row(r) for r in rows], metrics.FILE_METRICS)
    return metrics.rank1_only(out) if blob else out
