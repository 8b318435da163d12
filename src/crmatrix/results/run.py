"""A run: one dataset against one system under one arm, as `results/runs/{dataset}/{system}/{arm}.json` holds it.

`Run` holds every method's results (`MethodResult`: its metrics, latency, response sizes,
failures and one `QueryRow` per query) and what the run was made from (`Provenance`). A
metric table (`metrics`, `by_query_type`, `latency_ms`) is a dict by metric name, and what a
run records of its system (its settings, its own provenance, its install, its model) is kept
as it is: code looks those up by names it is given, not by fields.

A run file carries a checksum of everything else it holds (`integrity.seal`): `to_json`
adds it, `from_json` checks it, so a hand-edited or corrupted run stops whichever job reads
it (a cell, a chart, the gate, a tracker, `crmatrix check`) with the line a tampered index
gets, instead of flowing into the matrix.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from crmatrix import integrity
from crmatrix.jsontypes import JsonMapping, JsonType, omitted, rest


@dataclass(frozen=True, kw_only=True)
class FileLevel(JsonMapping):
    """A query's hits ranked as files (each at its first hit) against its gold's files: what a
    row whose gold is finer than files scores at file level (`crmatrix.evaluation.metrics.file_row`)."""
    rank: int | None
    relevant_ranks: tuple[int, ...]
    n_relevant: int


@dataclass(frozen=True, kw_only=True)
class QueryRow(JsonMapping):
    """One query's answer under one method (`crmatrix.evaluation.evaluate`). It reads as its
    JSON object too, so the per-query metrics score it as they score a run being built."""
    task_id: str
    query: str
    query_type: str
    gold: dict
    rank: int | None
    relevant_ranks: tuple[int, ...]
    n_relevant: int
    hits: int
    top_candidate: dict | None
    elapsed_ms: float
    response_bytes: int
    response_tokens: int
    error: str | None
    failure: str | None
    stratum: str | None = omitted()
    # what an answer without failure named when it named nothing of the corpus: "empty" (no hit)
    # or "unresolved" (none a symbol or file of it); absent: a hit or a miss, as `rank` tells
    # (`outcome` gives every query's)
    outcome: str | None = omitted()
    excerpt: str | None = omitted()  # an external system's raw answer, its first EXCERPT_BYTES bytes
    # grep-and-read beside it (crmatrix.evaluation.tokenbench.annotate; absent from a run made without it)
    grep_tokens: int | None = omitted()
    grep_hit: bool | None = omitted()
    grep_files: tuple[str, ...] | None = omitted()
    read_hit: bool | None = omitted()
    file_level: FileLevel | None = omitted()  # a gold finer than files: the row at file level


# Every query is one of these: a relevant hit, a miss (its hits relevant to nothing), an answer
# naming nothing (`empty`) or only what the corpus has not (`unresolved`), or a failure.
OUTCOMES = ("hit", "miss", "empty", "unresolved", "failed")
NAMED_NOTHING = ("empty", "unresolved")  # what a row's `outcome` records; `rank` and `failure` tell the rest


def outcome(row) -> str:
    """The outcome (OUTCOMES) of a query row, as its JSON object or its `QueryRow`."""
    if row["failure"]:
        return "failed"
    return row.get("outcome") or ("hit" if row["rank"] is not None else "miss")


@dataclass(frozen=True, kw_only=True)
class GrepBaseline(JsonType):
    read_files: int
    read_lines: int
    min_word: int


@dataclass(frozen=True, kw_only=True)
class TokenSaving(JsonType):
    """Tokens read per query, the system's against grep-and-read's, over a group of queries."""
    n: int
    grep_tokens: float
    system_tokens: float
    saving: float | None
    grep_hit_rate: float
    system_hit_rate: float
    both_hit: int
    saving_both_hit: float | None
    # failed and empty answers left out of the tokens and savings (an answer of nothing costs
    # nothing, and is no saving); the hit rates keep every query
    excluded: int = omitted(0)


@dataclass(frozen=True, kw_only=True)
class TokenEfficiency(JsonType):
    baseline: GrepBaseline
    all: TokenSaving
    by_query_type: dict[str, TokenSaving]


@dataclass(frozen=True, kw_only=True)
class MethodResult(JsonType):
    metrics: dict[str, float | None]  # by metric name (`n` among them); a blob's deeper metrics are None
    by_query_type: dict[str, dict[str, float | None]]
    response: str  # crmatrix.systems.answers: RANKED or BLOB
    latency_ms: dict[str, float]
    response_bytes: dict[str, float]
    response_tokens: dict[str, float]
    errors: int
    failures: dict[str, int]  # by kind (crmatrix.systems.answers.FAILURE_KINDS)
    no_hit: int
    no_hit_warning: bool
    queries: tuple[QueryRow, ...]
    empty: int = omitted(0)  # answers naming nothing, among `no_hit`
    unresolved: int = omitted(0)  # answers naming only what the corpus has not, among `no_hit`
    no_hit_cause: str | None = omitted()  # with `no_hit_warning`: why (crmatrix.evaluation.accounting)
    token_efficiency: TokenEfficiency | None = omitted()
    # what its hits name (crmatrix.hits: file, symbol, span), and every metric at file level
    granularity: str | None = omitted()
    file_metrics: dict[str, float | None] | None = omitted()


@dataclass(frozen=True, kw_only=True)
class CorpusFacts(JsonType):
    name: str
    pin: dict
    content_hash: str
    language: str | None


@dataclass(frozen=True, kw_only=True)
class DatasetFacts(JsonType):
    name: str
    file: str
    sha256: str
    split: str
    seed: int | None


@dataclass(frozen=True, kw_only=True)
class ArmFacts(JsonType):
    name: str
    env: dict[str, str]


@dataclass(frozen=True, kw_only=True)
class SystemFacts(JsonType):
    name: str
    methods: tuple[str, ...]  # in its config's order (a run's `methods` is written sorted by name)
    settings: dict[str, Any] = rest()  # the rest of its config: type, options, timeouts


@dataclass(frozen=True, kw_only=True)
class Provenance(JsonType):
    """What a run was made from (crmatrix.evaluation.provenance.record)."""
    crmatrix_version: str
    python: str
    corpus: CorpusFacts
    dataset: DatasetFacts
    system: SystemFacts
    system_version: str
    install: dict | None
    arm: ArmFacts
    model: dict | None
    system_run: dict | None  # what the system recorded of itself (the builtin: its knobs, its model)
    config_hash: str


@dataclass(frozen=True, kw_only=True)
class Run(JsonType):
    KIND = "a crmatrix run"

    dataset: str
    system: str
    arm: str
    top_k: int
    prepare_s: float
    methods: dict[str, MethodResult]  # by name, sorted
    provenance: Provenance

    @property
    def name(self) -> str:
        """`dataset/system/arm`, as the run's path under results/runs/ names it."""
        return f"{self.dataset}/{self.system}/{self.arm}"

    @property
    def clamped(self) -> list[str]:
        """The values the system clamped (the builtin engine's knob notes), none for the others."""
        return list(((self.provenance.system_run or {}).get("knobs") or {}).get("notes", []))

    def to_json(self) -> dict:
        return integrity.seal(super().to_json())

    @classmethod
    def from_json(cls, doc: Any, where: str = "run") -> Run:
        """The run `doc`, refused with one line when its checksum does not match what it holds."""
        return super().from_json(integrity.unseal(doc, str(where)), where)

