"""Indexes and runs prove their bytes: an index's checksums recorded at the build, verified at
every load; a run's checksum written with it, checked by every job that reads it, with the same
line; then through Snakemake, a builtin index and an external tool's index altered after their
build, and a run edited by hand after the matrix was made."""

import json
import os
import re
import shutil

import fixture_runs
import pytest
import yaml
from conftest import by_hand, snakemake
from test_systems import CORPUS, DATASET, INDEXED
from test_workflow import matrix  # noqa: F401 (a fixture)
from test_workflow import run as run_matrix

from crmatrix import CrmatrixError, cli, integrity, trackers
from crmatrix.results.run import Run
from crmatrix.stages import cell_stats, gate_candidates, plot_leaderboard, track_run

HINT = "delete the index directory and run again"
RUN_HINT = "delete the run file and run again"


@pytest.fixture
def built(tmp_path):
    root = tmp_path / "index"
    (root / "sub").mkdir(parents=True)
    (root / "vectors.bin").write_bytes(bytes(range(256)) * 4)
    (root / "sub" / "meta.json").write_text('{"n": 1}\n')
    os.symlink("sub/meta.json", root / "link")
    sums = integrity.record(root)
    assert sorted(sums["files"]) == ["link", "sub/meta.json", "vectors.bin"]
    assert sums["files"]["vectors.bin"]["bytes"] == 1024 and sums["files"]["link"] == {"link": "sub/meta.json"}
    integrity.verify(root)
    return root


def refused(root, rel) -> str:
    with pytest.raises(CrmatrixError) as e:
        integrity.verify(root)
    assert str(e.value).startswith(f"{root / rel}: ") and str(e.value).endswith(f"; {HINT}")
    return str(e.value)


def test_a_file_altered_resized_or_missing_is_named_and_an_added_one_is_no_part_of_the_index(built):
    (built / "lock").write_text("a tool's lock file, made after the build\n")
    integrity.verify(built)
    data = bytearray((built / "vectors.bin").read_bytes())
    data[100:500] = bytes(b ^ 0xFF for b in data[100:500])  # 400 bytes flipped: same size, other bytes
    (built / "vectors.bin").write_bytes(bytes(data))
    assert re.fullmatch(r".*: its bytes differ from those recorded when the index was built \(sha256 [0-9a-f]{12}, "
                        r"recorded [0-9a-f]{12}\); .*", refused(built, "vectors.bin"))
    (built / "vectors.bin").write_bytes(bytes(data[:1000]))
    assert ": 1000 bytes, but 1024 bytes when the index was built; " in refused(built, "vectors.bin")
    (built / "vectors.bin").unlink()
    assert ": missing (recorded when the index was built); " in refused(built, "vectors.bin")


def test_a_link_retargeted_and_an_index_without_checksums_are_refused(built):
    (built / "link").unlink()
    os.symlink("vectors.bin", built / "link")
    assert ": not the link to sub/meta.json recorded when the index was built; " in refused(built, "link")
    (built / integrity.CHECKSUMS).unlink()
    with pytest.raises(CrmatrixError) as e:
        integrity.verify(built)
    assert str(e.value) == (f"{built}: no crmatrix-checksums.json (built by an older crmatrix, or cut short), so its "
                            f"files cannot be checked; {HINT}")


@pytest.mark.slow
def test_through_snakemake_an_altered_index_stops_its_evaluation_naming_the_file(tmp_path):
    for rel, text in CORPUS.items():
        (tmp_path / "src" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "src" / rel).write_text(text)
    (tmp_path / "ds.json").write_text(json.dumps(DATASET))
    cfg = {
        "corpora": {"fake": {"path": "src"}},
        "datasets": {"ds": {"file": "ds.json", "corpus": "fake"}},
        "systems": {"builtin": {"type": "builtin", "methods": ["semantic"]},
                    "cli": {"type": "command", "options": {**INDEXED, "index_env": []}}},
        "arms": {"baseline": {}},
        "headline_method": "semantic",
    }
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(cfg))

    def run(*args, check=True):
        return snakemake(tmp_path, "--cores", "2", "all", "--configfile", str(tmp_path / "config.yaml"), *args,
                         check=check)

    def mrr(system, method):
        path = tmp_path / f"results/runs/ds/{system}/baseline.json"
        return json.loads(path.read_text())["methods"][method]["metrics"]["mrr"]

    run()
    before = {"builtin": mrr("builtin", "semantic"), "cli": mrr("cli", "search")}
    assert before["cli"] == 1.0
    (vectors,) = (tmp_path / "results/index/fake/builtin").glob("*/vectors.npy")
    (tool_index,) = (tmp_path / "results/index/fake/cli").glob("*/fake-index.json")
    data = bytearray(vectors.read_bytes())
    data[200:600] = bytes(b ^ 0x55 for b in data[200:600])  # 400 bytes of floats: still a valid array
    vectors.write_bytes(bytes(data))
    # a symbol renamed in the tool's index, the length kept: still valid JSON of the same size
    tool_index.write_text(tool_index.read_text().replace('"save_value"', '"save_vXlue"'))

    # Snakemake sees nothing (the directories' times are the build's), but every load checks the bytes
    proc = run("--forcerun", "evaluate_arm", "--keep-going", check=False)
    assert proc.returncode != 0
    for path, system in ((vectors, "builtin system 'builtin'"), (tool_index, "command system 'cli'")):
        rel = path.relative_to(tmp_path)  # the line names the job's system and dataset, then the file
        assert re.search(rf"^crmatrix: {system} on dataset 'ds', arm 'baseline': {re.escape(str(rel))}: its bytes "
                         rf"differ from those recorded when the index was built \(sha256 [0-9a-f]{{12}}, recorded "
                         rf"[0-9a-f]{{12}}\); {HINT}$",
                         proc.stderr, flags=re.M), proc.stderr
    assert not (tmp_path / "results/runs/ds/builtin/baseline.json").exists()

    # as the message says: the index directories deleted, the next run rebuilds them and scores as before
    shutil.rmtree(vectors.parent)
    shutil.rmtree(tool_index.parent)
    run()
    assert {"builtin": mrr("builtin", "semantic"), "cli": mrr("cli", "search")} == before


# --- runs ---------------------------------------------------------------------------------------

def every_rank_one(path) -> None:
    """A run file edited by hand (or a tool): every query of every method found at rank 1, the checksum left."""
    doc = json.loads(path.read_text())
    for result in doc["methods"].values():
        for q in result["queries"]:
            q.update(rank=1, relevant_ranks=[1], n_relevant=max(q["n_relevant"], 1))
    assert doc != json.loads(path.read_text())
    path.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")


def altered(path) -> str:
    """The line that a run altered since it was written gets, whoever reads it."""
    return (rf"{re.escape(str(path))}: its bytes differ from those recorded when the run was written "
            rf"\(sha256 [0-9a-f]{{12}}, recorded [0-9a-f]{{12}}\); {RUN_HINT}")


def test_a_run_carries_the_checksum_of_what_it_holds_whatever_its_layout(tmp_path):
    doc = fixture_runs.run("gamma", "sparse", fixture_runs.RANKS["gamma"][1]["sparse"], "rust")
    path = fixture_runs.write(tmp_path / "run.json", doc)
    written = json.loads(path.read_text())
    assert written == {**doc, "checksum": integrity.atomic.hash_obj(doc)}  # one key more than what it holds
    run = Run.read(path)
    path.write_text(json.dumps(written))  # on one line, keys in another order: the same content
    assert Run.read(path) == run
    every_rank_one(path)
    with pytest.raises(CrmatrixError) as e:
        Run.read(path)
    assert re.fullmatch(altered(path), str(e.value)), str(e.value)
    path.write_text(json.dumps(doc))  # no checksum: written by an older crmatrix, or by something else
    with pytest.raises(CrmatrixError) as e:
        Run.read(path)
    assert str(e.value) == (f"{path}: no 'checksum' (written by an older crmatrix, or not by crmatrix), so what it "
                            f"holds cannot be checked; {RUN_HINT}")


def test_every_job_that_reads_a_run_refuses_an_edited_one_with_that_line(tmp_path, capsys):
    ranks = fixture_runs.RANKS["gamma"][1]
    runs = [fixture_runs.write(tmp_path / "runs" / f"{arm}.json", fixture_runs.run("gamma", arm, ranks[arm], "rust"))
            for arm in ("baseline", "stacked")]
    every_rank_one(runs[1])
    pair = {"p": {"release": {"system": "builtin", "arm": "baseline"},
                  "candidate": {"system": "builtin", "arm": "stacked"}, "max_drop": {"hybrid.mrr": 0.02}}}
    out = tmp_path / "out"
    jobs = {
        "cell_stats": lambda: cell_stats.run(runs[1], runs[0], "hybrid", None, out / "cell.json"),
        "gate_candidates": lambda: gate_candidates.run(runs, pair, out / "gate.json", out / "gate.txt"),
        "plot_leaderboard": lambda: plot_leaderboard.run(runs=runs, out=out / "leaderboard", reference="builtin",
                                                         headline_method="hybrid", runtime=out / "vega.js"),
        "track_run": lambda: track_run.run(run_path=runs[1], trec_dir=tmp_path, options={}, out=out / "sent.json"),
        "event_log": lambda: trackers.event_log(runs[1], None, out / "log.jsonl"),
    }
    for name, job in jobs.items():
        with pytest.raises(CrmatrixError) as e:
            job()
        assert re.fullmatch(altered(runs[1]), str(e.value)), name
    assert not out.exists()  # nothing written
    for args in (["check", str(runs[1]), "--min", "hybrid.mrr=0.1"], ["promote", str(runs[1]), "--out", str(out)]):
        assert cli.main(args) == 2
        assert re.fullmatch(f"crmatrix: {altered(runs[1])}\n", capsys.readouterr().err), args


@by_hand
def test_through_snakemake_an_edited_run_stops_its_cell_and_the_matrix_keeps_its_numbers(matrix):  # noqa: F811
    """Every rank of a finished run set to 1 by hand (the checksum left), nothing else touched:
    the cell refuses it, so the matrix never shows the arm as a strong 1.000."""
    work, _ = matrix
    dataset = work / "ds/gitds.json"  # a query the engine misses, so that rank 1 is another answer
    dataset.write_text(json.dumps([*json.loads(dataset.read_text()), {
        "query": "zebras grazing", "expected_symbol": "Store", "expected_file_suffix": "pkg/core.py"}]))
    run_matrix(work, "all")
    phase = work / "results/matrix/phase-matrix.json"
    before = phase.read_bytes()
    rel = "results/runs/gitds/builtin/knob.json"
    every_rank_one(work / rel)
    proc = run_matrix(work, "all", check=False)
    assert proc.returncode != 0
    assert re.search(f"^crmatrix: {altered(rel)}$", proc.stderr, flags=re.M), proc.stderr
    assert "Traceback" not in proc.stderr
    assert phase.read_bytes() == before
    # as the line says: the run deleted, the next run scores it again, and the matrix is what it was
    (work / rel).unlink()
    run_matrix(work, "all")
    assert phase.read_bytes() == before
