"""Results as types (crmatrix.results, crmatrix.jsontypes): every run, cell and phase matrix a
matrix writes reads through its type and is written back byte for byte (tests/roundtrip.py,
on the hand-made varied matrix and on the tiny matrix through Snakemake), and what a type
refuses, in one line naming the file and the key."""

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import fixture_runs
import pytest
from conftest import ROOT
from test_matrix import ARCHETYPES, SUMMARIES
from test_workflow import matrix, run  # noqa: F401 (matrix is a fixture)

from crmatrix import CrmatrixError, atomic, integrity, jsontypes
from crmatrix.results.cell import Cell
from crmatrix.results.matrix import PhaseMatrix
from crmatrix.results.run import QueryRow, Run
from crmatrix.results.times import RunTimes
from crmatrix.stages import collect_matrix

NOTE = "oracle: the gold docs only"


def roundtrip(results: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "tests" / "roundtrip.py"), str(results)],
                          capture_output=True, text=True, timeout=600)


def finished(results: Path) -> list[Path]:
    """fixture_runs' varied matrix laid out as the workflow writes it under `results`: its runs,
    each run's cell, the phase matrix (a note on beta, dropped rows, a test split in the ledger)."""
    runs = [fixture_runs.write(results / "runs" / r["dataset"] / r["system"] / f"{r['arm']}.json", r)
            for r in fixture_runs.varied_run_docs()]
    cells = fixture_runs.cell_files(runs, "baseline", "hybrid", fixture_runs.FORMATS,
                                    where=lambda p: results / "cells" / p.relative_to(results / "runs"),
                                    times=lambda p: results / "times" / p.relative_to(results / "runs"))
    summaries = {d: results / "datasets" / f"{d}.summary.json" for d in SUMMARIES}
    for d, path in summaries.items():
        atomic.write_json(path, SUMMARIES[d])
    collect_matrix.run(cells, "baseline", "hybrid", fixture_runs.ARMS, ARCHETYPES, results / "matrix/phase-matrix.json",
                       results / "matrix/phase-matrix.md", fixture_runs.SPLITS, ledger_path=results / "ledger.json",
                       summaries=summaries, notes={"beta": NOTE})
    return runs


def test_every_result_of_a_matrix_reads_as_its_type_and_writes_back_byte_for_byte(tmp_path):
    results = tmp_path / "results"
    runs = finished(results)
    proc = roundtrip(results)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == (f"{results}: {len(runs)} runs, {len(runs)} cells, {len(runs)} runs' times and the phase "
                           "matrix (and its Markdown) read as types and written again byte for byte\n")
    m = PhaseMatrix.read(results / "matrix/phase-matrix.json")  # what the varied matrix exercises: every optional part
    assert m.notes == {"beta": NOTE} and [r.note for r in m.rows if r.note] == [NOTE]
    assert m.gates and m.benchmarks and m.test_ledger and any(b.dropped for b in m.benchmarks)
    assert {c.response for r in m.rows for c in r.cells.values()} == {None, "blob"}
    alpha = Run.read(results / "runs/alpha/builtin/baseline.json").methods["hybrid"]
    assert alpha.token_efficiency is not None and alpha.queries[0].stratum == "repo-a"
    # and it tells: the same values written in another layout are other bytes
    cell = results / "cells/gamma/builtin/stacked.json"
    cell.write_text(json.dumps(json.loads(cell.read_text())))
    proc = roundtrip(results)
    assert (proc.returncode, proc.stderr) == (1, f"roundtrip: {cell}: read as Cell and written again, its bytes "
                                                 "differ\n")


def test_a_finished_workflow_matrix_reads_as_its_types_byte_for_byte(matrix):  # noqa: F811
    """The tiny matrix's runs as the builtin engine writes them (its knobs, the grep-and-read baseline)."""
    work, _ = matrix
    run(work, "all")
    proc = roundtrip(work / "results")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"{work / 'results'}: 4 runs, 4 cells, 4 runs' times and the phase matrix")


def test_the_compiled_reader_takes_what_the_key_path_reader_takes(tmp_path):
    """Types are read by a function compiled per type, and again by the reader that follows the
    key path only for an error: both give equal values for every result of the varied matrix."""
    results = tmp_path / "results"
    finished(results)
    files = ([(Run, p) for p in results.glob("runs/*/*/*.json")] + [(Cell, p) for p in results.glob("cells/*/*/*.json")]
             + [(RunTimes, p) for p in results.glob("times/*/*/*.json")])
    for cls, path in [*files, (PhaseMatrix, results / "matrix/phase-matrix.json")]:
        written = atomic.read_json(path)
        doc = integrity.unseal(written, str(path)) if cls is Run else written  # its checksum checked and left out
        compiled = jsontypes._object_reader(cls)(doc)
        assert compiled == cls._read_object(doc, jsontypes._At(str(path))), path
        assert compiled.to_json() == written
    assert len(files) == 3 * len(fixture_runs.varied_run_docs())


@dataclasses.dataclass(frozen=True)
class _Inner(jsontypes.JsonType):
    n: int


@dataclasses.dataclass(frozen=True)
class _Outer(jsontypes.JsonType):
    KIND = "an outer"
    either: _Inner | dict  # an object read as the type first, as it is otherwise
    maybe: float | None
    names: list[str]


@pytest.mark.parametrize("doc,read", [
    ({"either": {"n": 1}, "maybe": 2, "names": ["a"]}, _Outer(_Inner(1), 2, ["a"])),
    ({"either": {"m": 1}, "maybe": None, "names": []}, _Outer({"m": 1}, None, [])),
    ({"either": {"n": True}, "maybe": 0.5, "names": ["a", "b"]}, _Outer({"n": True}, 0.5, ["a", "b"])),
])
def test_the_compiled_reader_takes_a_union_option_by_option(doc, read):
    assert _Outer.from_json(doc) == read == _Outer._read_object(doc, jsontypes._At("x"))


@pytest.mark.parametrize("doc,why", [
    ({"either": {"n": 1}, "maybe": True, "names": []}, "maybe: expected a number or null, got a boolean"),
    ({"either": {"n": 1}, "maybe": 1, "names": ["a", 2]}, "names[1]: expected a string, got an integer"),
    ({"either": [], "maybe": 1, "names": []}, "either: expected an object, got a list"),
])
def test_a_value_the_compiled_reader_refuses_is_named_by_its_key(doc, why):
    with pytest.raises(CrmatrixError) as e:
        _Outer.from_json(doc, "o.json")
    assert str(e.value) == f"o.json: not an outer ({why})"


def test_a_query_row_reads_as_its_json_object_too():
    """What the per-query metrics score: a row being built (a dict) or read back (a QueryRow)."""
    doc = fixture_runs.run("alpha", "baseline", [3], "python")["methods"]["hybrid"]["queries"][0]
    row = QueryRow.from_json(doc)
    assert (row["rank"], row.get("stratum"), "stratum" in row, list(row)) == (3, None, False, list(doc))
    assert row.to_json() == doc
    assert QueryRow.from_json({**doc, "stratum": "r"})["stratum"] == "r"


@pytest.mark.parametrize("edit,why", [
    (lambda c: c.pop("answers"), "no answers"),
    (lambda c: c["cell"].update(n="10"), "cell.n: expected an integer, got a string"),
    (lambda c: c["cell"].update(n=True), "cell.n: expected an integer, got a boolean"),
    (lambda c: [c["cell"].pop(k) for k in ("band", "unchanged")], "cell: no band, unchanged"),
    (lambda c: c["decomposition"]["improved"][0].update(rank=1), "decomposition.improved[0]: unknown key 'rank' "
                                                                  "(expected: arm_rank, base_rank, query, "
                                                                  "query_type, task_id, transition)"),
    (lambda c: c.update(format=[]), "format: expected an object, got a list"),
])
def test_a_cell_file_that_is_not_one_is_one_line_naming_the_key(tmp_path, edit, why):
    results = tmp_path / "results"
    finished(results)
    doc = atomic.read_json(results / "cells/gamma/builtin/stacked.json")
    edit(doc)
    with pytest.raises(CrmatrixError) as e:
        Cell.from_json(doc, "c.json")
    assert str(e.value) == f"c.json: not a cell's statistics ({why})"
