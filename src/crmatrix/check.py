"""Quality gates over a run summary: `hybrid.mrr=0.5` as a minimum, `hybrid.latency_p95_ms=250` as a maximum.

A gate names `method.metric` or `method.query_type.metric`; a gate the run cannot answer
is a failure too, so a renamed method or metric never passes silently.
"""

from __future__ import annotations

from dataclasses import dataclass

from crmatrix import CrmatrixError

LATENCY = {"latency_p50_ms": "p50", "latency_p95_ms": "p95", "latency_p99_ms": "p99"}
FORM = "METHOD.METRIC=NUMBER or METHOD.QUERY_TYPE.METRIC=NUMBER (e.g. hybrid.mrr=0.5)"


@dataclass(frozen=True)
class Gate:
    name: str  # the gate's left-hand side as written, e.g. "lexical.natural_language.acc@1"
    method: str
    query_type: str | None
    metric: str
    bound: float
    kind: str  # "min" or "max"

    def fails(self, value: float) -> bool:
        return value < self.bound if self.kind == "min" else value > self.bound


def _parse(text: str, kind: str) -> Gate:
    name, eq, number = text.partition("=")
    parts = name.strip().split(".")
    if eq and len(parts) in (2, 3) and all(parts):
        try:
            return Gate(name.strip(), parts[0], parts[1] if len(parts) == 3 else None, parts[-1], float(number), kind)
        except ValueError:
            pass  # not a number: reported below with the expected form
    raise CrmatrixError(f"{kind} gate {text!r}: expected {FORM}")


def parse_gates(mins: list[str], maxs: list[str]) -> list[Gate]:
    return [_parse(t, "min") for t in mins] + [_parse(t, "max") for t in maxs]


def _lookup(run: dict, gate: Gate) -> float | str:
    """The gated value, or the failure line saying which part is absent from the run."""
    methods = run.get("methods", {})
    if gate.method not in methods:
        return f"{gate.name}: not in the run (methods: {', '.join(sorted(methods)) or 'none'})"
    result = methods[gate.method]
    if gate.metric in LATENCY and gate.query_type is None:
        return result["latency_ms"][LATENCY[gate.metric]]
    table = result["metrics"]
    if gate.query_type is not None:
        types = result.get("by_query_type", {})
        if gate.query_type not in types:
            return f"{gate.name}: not in the run (query types: {', '.join(sorted(types)) or 'none'})"
        table = types[gate.query_type]
    if gate.metric not in table:
        return f"{gate.name}: not in the run (metrics: {', '.join(sorted(table))})"
    if table[gate.metric] is None:
        return f"{gate.name}: not scored (a blob system is scored at rank 1 only)"
    return table[gate.metric]


def _number(x: float) -> str:
    return f"{x:.6g}"


def check(run: dict, gates: list[Gate]) -> list[str]:
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
