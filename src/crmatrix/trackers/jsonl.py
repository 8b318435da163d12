"""An event log per run, one JSON object per line (run_start, metrics, artifact..., run_end), in
one file: the workflow's `results/tracking/<dataset>/<system>/<arm>.jsonl`, which the job that
makes the run writes beside it (a job per run, so an added run writes one log and no other)."""

from __future__ import annotations

import datetime
import json
from pathlib import Path

from crmatrix import atomic
from crmatrix.trackers import register


@register("jsonl")
class JsonlTracker:
    def __init__(self, path: Path):
        self.out = Path(path)
        self.events: list[dict] = []

    def _event(self, kind: str, **fields) -> None:
        self.events.append({"event": kind, "time": datetime.datetime.now(datetime.UTC).isoformat(
            timespec="milliseconds"), **fields})

    def start_run(self, name: str, params: dict[str, str], tags: dict[str, str]) -> bool:
        self.events = []
        self._event("run_start", run=name, params=params, tags=tags)
        return True

    def log_metrics(self, metrics: dict[str, float]) -> None:
        self._event("metrics", metrics=metrics)

    def log_artifact(self, path: Path) -> None:
        path = Path(path)
        self._event("artifact", path=str(path), sha256=atomic.sha256_file(path) if path.is_file() else None)

    def end_run(self, status: str) -> None:
        self._event("run_end", status=status)
        atomic.write_text(self.out, "".join(json.dumps(e, sort_keys=True, ensure_ascii=False) + "\n"
                                            for e in self.events))
