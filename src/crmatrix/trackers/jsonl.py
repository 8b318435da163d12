"""An event log per run, one JSON object per line (run_start, metrics, artifact..., run_end), at
`directory/<dataset>/<system>/<arm>.jsonl`."""

from __future__ import annotations

import datetime
import json
from pathlib import Path

from crmatrix import atomic
from crmatrix.trackers import register


@register("jsonl")
class JsonlTracker:
    def __init__(self, directory: Path):
        self.directory = Path(directory)
        self.out: Path | None = None
        self.events: list[dict] = []

    def _event(self, kind: str, **fields) -> None:
        self.events.append({"event": kind, "time": datetime.datetime.now(datetime.UTC).isoformat(
            timespec="milliseconds"), **fields})

    def start_run(self, name: str, params: dict[str, str], tags: dict[str, str]) -> bool:
        self.out, self.events = self.directory / f"{name}.jsonl", []
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
