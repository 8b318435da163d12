"""Every result of a finished run read through its type and written again: the same bytes.

By hand, after `make run` (or any matrix); tests/test_results.py runs it on the tiny matrix.
Each run (`results/runs/*/*/*.json`, its checksum checked), each cell's statistics
(`results/cells/*/*/*.json`), each run's times (`results/times/*/*/*.json`) and the phase
matrix are read as `crmatrix.results` types, and
their `to_json` written as the workflow writes JSON must be the file's bytes; the phase
matrix's Markdown, made again from the typed matrix, must be `phase-matrix.md`.

    .venv/bin/python tests/roundtrip.py [RESULTS]    # default: results
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from crmatrix import CrmatrixError
from crmatrix.analysis.matrix.markdown import to_markdown
from crmatrix.results.cell import Cell
from crmatrix.results.matrix import PhaseMatrix
from crmatrix.results.run import Run
from crmatrix.results.times import RunTimes


def as_written(obj) -> bytes:
    """JSON as crmatrix.atomic.write_json writes it."""
    return (json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()


def roundtrip(results: Path) -> dict[str, int]:
    """How many files of each kind came back byte for byte; the first that did not is a CrmatrixError."""
    kinds = {"runs": (Run, sorted(results.glob("runs/*/*/*.json"))),
             "cells": (Cell, sorted(results.glob("cells/*/*/*.json"))),
             "times": (RunTimes, sorted(results.glob("times/*/*/*.json"))),
             "matrix": (PhaseMatrix, [results / "matrix" / "phase-matrix.json"])}
    counts = {}
    for kind, (cls, paths) in kinds.items():
        for path in paths:
            value = cls.read(path)
            if as_written(value.to_json()) != path.read_bytes():
                raise CrmatrixError(f"{path}: read as {cls.__name__} and written again, its bytes differ")
            if cls is PhaseMatrix and to_markdown(value) != path.with_suffix(".md").read_text(encoding="utf-8"):
                raise CrmatrixError(f"{path.with_suffix('.md')}: not the Markdown of the matrix read as its type")
        counts[kind] = len(paths)
    return counts


def main(results: Path) -> int:
    try:
        counts = roundtrip(results)
    except (CrmatrixError, OSError) as e:
        print(f"roundtrip: {e}", file=sys.stderr)
        return 1
    print(f"{results}: {counts['runs']} runs, {counts['cells']} cells, {counts['times']} runs' times and the phase "
          "matrix (and its Markdown) read as types and written again byte for byte")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1] if len(sys.argv) > 1 else "results")))
