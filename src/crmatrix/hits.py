"""The ranked-hit shape every system returns, and the one deterministic order of hits."""

from __future__ import annotations

from dataclasses import dataclass

# What a system's hits name, its granularity (`crmatrix.systems.base.System.granularity`): whole
# files, definitions, or spans of lines (a span is scored by the symbol it names, as a symbol).
FILE, SYMBOL, SPAN = "file", "symbol", "span"
GRANULARITIES = (FILE, SYMBOL, SPAN)


@dataclass(frozen=True)
class Hit:
    path: str
    symbol: str
    kind: str
    start_line: int
    end_line: int
    score: float

    def to_dict(self) -> dict:
        # spelled out: dataclasses.asdict deep-copies field by field, ~10x the cost, and an
        # evaluation turns some 2,500 hits into JSON
        return {"path": self.path, "symbol": self.symbol, "kind": self.kind, "start_line": self.start_line,
                "end_line": self.end_line, "score": self.score}


def sort_key(h: Hit) -> tuple:
    """Ties are broken by (path, start_line, symbol), never by insertion order."""
    return (-h.score, h.path, h.start_line, h.symbol)


def ranked(hits: list[Hit], k: int) -> list[Hit]:
    return sorted(hits, key=sort_key)[:k]


def docid(hit: Hit) -> str:
    """One symbol's id in TREC files and qrels: unique even for same-named symbols of a file."""
    return f"{hit.path}:{hit.start_line}:{hit.symbol}"
