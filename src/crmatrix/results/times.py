"""A run's times: what the latency charts read of a run, as `results/times/{dataset}/{system}/{arm}.json` holds it.

The latency charts pool every query's search time per system, method and arm over all the
datasets, so they need every run; reading every run whole (the seed matrix's 744 runs, 386 MB)
took 9.4 of the 12.6 CPU seconds of their job, and the job comes again with each added arm. A run's
cell job reads the run anyway, and writes this beside the cell: each method's metrics and
search times, and the run's provenance (what the charts check and group by).
"""

from __future__ import annotations

from dataclasses import dataclass

from crmatrix.jsontypes import JsonType
from crmatrix.results.run import Provenance, Run


@dataclass(frozen=True, kw_only=True)
class MethodTimes(JsonType):
    metrics: dict[str, float | None]  # as the run's (`MethodResult.metrics`)
    elapsed_ms: tuple[float, ...]  # each query's search, in the run's order


@dataclass(frozen=True, kw_only=True)
class RunTimes(JsonType):
    KIND = "a run's times"

    dataset: str
    system: str
    arm: str
    methods: dict[str, MethodTimes]  # by name, as the run's
    provenance: Provenance

    @classmethod
    def of(cls, run: Run) -> RunTimes:
        return cls(dataset=run.dataset, system=run.system, arm=run.arm, provenance=run.provenance,
                   methods={m: MethodTimes(metrics=r.metrics, elapsed_ms=tuple(q.elapsed_ms for q in r.queries))
                            for m, r in run.methods.items()})
