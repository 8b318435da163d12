"""benchmarks/floors.py's one-rule floor, on a real Snakemake: the trivial Snakefile's jobs run
once, then its no-op reruns take turns with the matrix's, the fastest of each kept; and where
timing.py puts a report."""

import subprocess
import sys

from conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
import floors
import timing


def test_the_noop_and_its_floor_take_turns_and_keep_their_fastest(tmp_path, monkeypatch):
    trivial = tmp_path / "trivial"
    trivial.mkdir()
    monkeypatch.setattr(floors, "workspace", lambda name: trivial)
    events, run = [], subprocess.run

    def snakemake(cmd, **kw):  # the trivial Snakefile's runs
        events.append("floor")
        return run(cmd, **kw)

    monkeypatch.setattr(floors.subprocess, "run", snakemake)

    def noop():  # the matrix's rerun
        events.append(sorted(p.name for p in (trivial / "out").iterdir()))
        return [3.0, 1.5, 2.0][events.count("floor") - 1]

    noop_s, floor_s = floors.noop_and_floor(noop, 3)
    done = ["0.txt", "1.txt", "2.txt"]  # the floor's jobs, run once before any timing
    assert events == ["floor", *[done, "floor"] * timing.REPEATS]
    assert noop_s == 1.5
    assert 0 < floor_s < 60


def test_a_second_report_of_a_day_goes_beside_the_first(tmp_path):
    assert timing.new_result("pipeline-2026-12-07-seed", tmp_path) == tmp_path / "pipeline-2026-12-07-seed.md"
    (tmp_path / "pipeline-2026-12-07-seed.md").write_text("first")
    assert timing.new_result("pipeline-2026-12-07-seed", tmp_path) == tmp_path / "pipeline-2026-12-07-seed-2.md"
    (tmp_path / "pipeline-2026-12-07-seed-2.md").write_text("second")
    assert timing.new_result("pipeline-2026-12-07-seed", tmp_path) == tmp_path / "pipeline-2026-12-07-seed-3.md"
