"""track_run: one run of the matrix sent to each tracker the config names (`trackers:`); its JSONL
event log is the evaluation job's own (crmatrix.trackers.event_log). A job per run, so an added
run sends one run and a rerun sends nothing twice (a tracker holding a run by its sha256 skips it)."""

from __future__ import annotations

from pathlib import Path

from crmatrix import atomic, trackers
from crmatrix.results.run import Run


def run(*, run_path: Path, trec_dir: Path, options: dict, out: Path) -> dict[str, bool]:
    """`options`: tracker name -> its options. Writes and returns the receipt at `out`: tracker
    name -> whether this job sent the run (False: the tracker held it already)."""
    run = Run.read(Path(run_path))
    sent = {name: trackers.record(trackers.make(name, opts), run, [Path(run_path), Path(trec_dir)])
            for name, opts in sorted(options.items())}
    atomic.write_json(Path(out), sent)
    return sent
