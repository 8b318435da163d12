"""The ranked-hit shape every system returns, and the one deterministic order of hits."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Hit:
    path: str
    symbol: str
    kind: str
    start_line: int
    end_line: int
    score: float

    def to_dict(self) -> dict:
        return asdict(self)


def sort_key(h: Hit) -> tuple:
    """Ties are broken by (path, start_line, symbol), never by insertion order."""
    return (-h.score, h.path, h.start_line, h.symbol)


def ranked(hits: list[Hit], k: int) -> list[Hit]:
    return sorted(hits, key=sort_key)[:k]


def docid(hit: Hit) -> str:
    """One symbol's id in TREC files and qrels: unique even for same-named symbols of a file."""
    return f"{hit.path}:{hit.start_line}:{hit.symbol}"
