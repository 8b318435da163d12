"""Quality gates over a run: `hybrid.mrr=0.5` as a minimum, `hybrid.latency_p95_ms=250` as a maximum.

A gate names `method.metric` or `method.query_type.metric`. A metric crmatrix does not
compute is a usage error (a misspelling, with a did-you-mean); a gate the run cannot answer
is a failure, so a renamed method or an unscored metric never passes silently.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from crmatrix import CrmatrixError, did_you_mean
from crmatrix.evaluation import metrics
from crmatrix.results.run import Run

LATENCY = {"latency_p50_ms": "p50", "latency_p95_ms": "p95", "latency_p99_ms": "p99"}
FORM = "METHOD.METRIC=NUMBER or METHOD.QUERY_TYPE.METRIC=NUMBER (e.g. hybrid.mrr=0.5)"


@dataclass(frozen=True)
class Gate:
    name: str  # the gate's left-hand side as written, e.g. "lexical.natural_language.acc@1"
    method: str
    query_type: str | None
    metric: str
    bound: float
    kind: str  # "min", "max", or "max-drop" (against a baseline, see crmatrix.analysis.baseline)

    def fails(self, value: float) -> bool:
        return value < self.bound if self.kind == "min" else value > self.bound


def parse_gate(text: str, kind: str) -> Gate:
    name, eq, number = text.partition("=")
    parts = name.strip().split(".")
    if eq and len(parts) in (2, 3) and all(parts):
        try:
            bound = float(number)
        except ValueError:
            bound = math.nan  # not a number: reported below with the expected form
        if math.isfinite(bound):  # nan would fail no gate, inf every one: neither is a bound
            gate = Gate(name.strip(), parts[0], parts[1] if len(parts) == 3 else None, parts[-1], bound, kind)
            known = _known_metrics(gate.query_type is not None)
            if gate.metric not in known:
                raise CrmatrixError(f"{kind} gate {text!r}: unknown metric {gate.metric!r} "
                                    f"({did_you_mean(gate.metric, known)}expected one of: {', '.join(known)})")
            return gate
    raise CrmatrixError(f"{kind} gate {text!r}: expected {FORM}")


def _known_metrics(per_query_type: bool) -> list[str]:
    """What a gate may name: a run's metrics (`n` and the per-query means), and for a whole
    method also its latency."""
    return ["n", *metrics.METRICS, *([] if per_query_type else LATENCY)]


def parse_drop(text: str) -> Gate:
    """`METHOD.METRIC=DROP` (or METHOD.QUERY_TYPE.METRIC=DROP) over a per-query metric."""
    gate = parse_gate(text, "max-drop")
    if gate.metric not in metrics.METRICS:
        raise CrmatrixError(f"max-drop gate {text!r}: {gate.metric!r} is not a per-query metric "
                            f"(expected one of: {', '.join(metrics.METRICS)})")
    return gate


def parse_gates(mins: list[str], maxs: list[str]) -> list[Gate]:
    return [parse_gate(t, "min") for t in mins] + [parse_gate(t, "max") for t in maxs]


def _lookup(run: Run, gate: Gate) -> float | str:
    """The gated value, or the failure line saying which part is absent from the run."""
    if gate.method not in run.methods:
        return f"{gate.name}: not in the run (methods: {', '.join(sorted(run.methods)) or 'none'})"
    result = run.methods[gate.method]
    if gate.metric in LATENCY and gate.query_type is None:
        table, key = result.latency_ms, LATENCY[gate.metric]
        if key not in table:
            return f"{gate.name}: not in the run (no latency_ms.{key})"
    else:
        table, key = result.metrics, gate.metric
        if gate.query_type is not None:
            types = result.by_query_type
            if gate.query_type not in types:
                return f"{gate.name}: not in the run (query types: {', '.join(sorted(types)) or 'none'})"
            table = types[gate.query_type]
        if key not in table:
            return f"{gate.name}: not in the run (metrics: {', '.join(sorted(table))})"
    value = table[key]
    if value is None:
        return f"{gate.name}: not scored (a blob system is scored at rank 1 only)"
    if not math.isfinite(value):  # NaN or infinite: the run's reader checked it is a number
        return f"{gate.name}: the run holds {value!r}, not a number"
    return value


def _number(x: float) -> str:
    return f"{x:.6g}"


def check(run: Run, gates: list[Gate]) -> list[str]:
    """One line per failed gate; an empty list means every gate passed."""
    failures = []
    for gate in gates:
        value = _lookup(run, gate)
        if isinstance(value, str):
            failures.append(value)
        elif gate.fails(value):
            shown = _number(value) if _number(value) != _number(gate.bound) else repr(value)
            op = "<" if gate.kind == "min" else ">"
            failures.append(f"{gate.name} = {shown} {op} {gate.kind} {_number(gate.bound)}")
    return failures
