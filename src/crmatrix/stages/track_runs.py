"""track_runs: every run of the matrix sent to the trackers: its JSONL event log always, and each
tracker the config names (`trackers:`)."""

from __future__ import annotations

from pathlib import Path

from crmatrix import atomic, trackers


def run(*, runs: list[Path], trec_dirs: list[Path], log_dir: Path, options: dict) -> int:
    """`options`: tracker name -> its options. Returns how many (run, tracker) pairs were new."""
    active = [trackers.make(trackers.ALWAYS_TRACKED, {"directory": Path(log_dir)}),
              *(trackers.make(n, o) for n, o in options.items())]
    sent = 0
    for path, trec in zip(runs, trec_dirs, strict=True):
        run_json = atomic.read_json(Path(path))
        sent += sum(trackers.record(t, run_json, [Path(path), Path(trec)]) for t in active)
    return sent
