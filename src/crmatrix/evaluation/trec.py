"""Runs and qrels in TREC text format, so trec_eval, ir_measures or ranx can re-score our rankings.

A run line is `qid Q0 docid rank score tag`. The score column is derived from the rank
(`len(list) - rank + 1`, an integer) rather than taken from the system: trec_eval sorts by
score and breaks ties by docid, which would silently replace our explicit tie-break
(`hits.sort_key`). With strictly decreasing scores every tool evaluates exactly our order.
Identifiers are written with whitespace replaced by `_`, since whitespace separates columns.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from crmatrix import atomic

_WHITESPACE = re.compile(r"\s")


def _token(s: str) -> str:
    return _WHITESPACE.sub("_", s)


def write_run(path: Path, ranked: dict[str, list[str]], tag: str) -> None:
    """One line per returned docid; qids sorted, each list kept in its ranked order."""
    lines, tag = [], _token(tag)
    for qid in sorted(ranked):
        docs, q = ranked[qid], _token(qid)
        for rank, docid in enumerate(docs, 1):
            lines.append(f"{q} Q0 {_token(docid)} {rank} {len(docs) - rank + 1} {tag}\n")
    atomic.write_text(path, "".join(lines))


def write_qrels(path: Path, qrels: dict[str, Iterable[str]]) -> None:
    """Binary judgments `qid 0 docid 1`; qids and docids sorted, since judgment order carries no meaning."""
    lines = [f"{_token(qid)} 0 {_token(docid)} 1\n" for qid in sorted(qrels) for docid in sorted(set(qrels[qid]))]
    atomic.write_text(path, "".join(lines))
