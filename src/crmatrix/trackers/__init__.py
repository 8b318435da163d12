"""Trackers: where each run of the matrix is also recorded, as an experiment tracker sees a run.

A tracker is a class registered by name with `@register("name")` (crmatrix.registry; another
package's under the entry-point group `crmatrix.trackers`), built with its config options,
and told one run at a time: `start_run(name, params, tags)`, `log_metrics`, `log_artifact`,
`end_run(status)` (the pydocs-mcp-eval seam: adding a tracker is one module). `record`
turns a run (`crmatrix.results.run.Run`) into those calls: parameters are the run's settings flattened to
`system.type`, `env.CODELENS_...`; tags say what it was made from (hashes, versions);
metrics are `method.metric` and `method.query_type.metric` means and latencies.

    jsonl   an event log per run (run_start, metrics, artifact, run_end), always written, by the
            evaluation job itself (`event_log`)
    mlflow  an MLflow experiment; needs the extra (pip install -e .[mlflow]); the workflow's
            track_run job sends each run to it, one job per run
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from crmatrix import atomic
from crmatrix.registry import Registry
from crmatrix.results.run import Run


class Tracker(Protocol):
    def start_run(self, name: str, params: dict[str, str], tags: dict[str, str]) -> bool:
        """Begin a run; False when the tracker holds this run already (nothing else is sent)."""

    def log_metrics(self, metrics: dict[str, float]) -> None: ...

    def log_artifact(self, path: Path) -> None: ...

    def end_run(self, status: str) -> None: ...


# Each tracker's module, imported when the tracker is named (it registers itself): an
# evaluation writing its event log loads no MLflow tracker.
def _jsonl() -> None:
    from crmatrix.trackers import jsonl  # noqa: F401


def _mlflow() -> None:
    from crmatrix.trackers import mlflow  # noqa: F401


TRACKERS: Registry[type] = Registry("tracker", "crmatrix.trackers", {"jsonl": _jsonl, "mlflow": _mlflow})
register = TRACKERS.register
ALWAYS_TRACKED = "jsonl"  # every run's event log, beside the trackers the config names


def make(name: str, options: dict) -> Tracker:
    """Tracker `name` built with its config options."""
    return TRACKERS.get(name, f"trackers.{name}")(**options)


def flatten(obj, prefix: str = "") -> dict[str, str]:
    """Nested settings as `a.b.c` -> text; lists joined with commas, None left out."""
    if isinstance(obj, dict):
        out: dict[str, str] = {}
        for k, v in sorted(obj.items()):
            out.update(flatten(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    if obj is None:
        return {}
    if isinstance(obj, list):
        return {prefix: ",".join(map(str, obj))}
    return {prefix: str(obj)}


def describe(run: Run) -> tuple[dict[str, str], dict[str, str], dict[str, float]]:
    """A run as (params, tags, metrics)."""
    prov = run.provenance
    params = flatten({"dataset": run.dataset, "arm": run.arm, "top_k": run.top_k,
                      "system": {k: v for k, v in prov.system.to_json().items() if k != "name"},
                      "system_name": run.system, "env": prov.arm.env,
                      "corpus": {"name": prov.corpus.name, "pin": prov.corpus.pin}})
    tags = flatten({"crmatrix_version": prov.crmatrix_version, "python": prov.python,
                    "corpus_content_hash": prov.corpus.content_hash, "corpus_language": prov.corpus.language,
                    "dataset_sha256": prov.dataset.sha256, "model_sha256": (prov.model or {}).get("sha256"),
                    "config_hash": prov.config_hash})
    metrics: dict[str, float] = {}
    for method, res in run.methods.items():
        groups = {"": res.metrics, **{f"{qt}.": m for qt, m in res.by_query_type.items()}}
        for where, values in groups.items():
            metrics.update({f"{method}.{where}{k}": float(v) for k, v in values.items() if v is not None})
        metrics.update({f"{method}.latency_{p}_ms": float(v) for p, v in res.latency_ms.items()})
        metrics[f"{method}.errors"] = float(res.errors)
    return params, tags, metrics


def event_log(run_path: Path, trec_dir: Path | None, out: Path) -> None:
    """The run's JSONL event log at `out`, read from the run file just written (the log describes
    what was written, byte for byte as a tracking job reading it later would)."""
    artifacts = [Path(run_path)] + ([Path(trec_dir)] if trec_dir is not None else [])
    record(make(ALWAYS_TRACKED, {"path": out}), Run.read(Path(run_path)), artifacts)


def record(tracker: Tracker, run: Run, artifacts: list[Path]) -> bool:
    """Send one run to a tracker; False when it had the run already. The run file's sha256 is
    its `run_sha256` tag, so a rerun of the tracking job does not record a run twice."""
    params, tags, metrics = describe(run)
    tags["run_sha256"] = atomic.sha256_file(artifacts[0])
    if not tracker.start_run(run.name, params, tags):
        return False
    try:
        tracker.log_metrics(metrics)
        for path in artifacts:
            tracker.log_artifact(path)
    except BaseException:
        tracker.end_run("FAILED")
        raise
    tracker.end_run("FINISHED")
    return True
