"""Serializer benchmark, run by hand (not in CI): can msgspec take over crmatrix's JSON (issue 45)?

    .venv/bin/python benchmarks/serializer.py [RESULTS] [--repeats N] [--write]

RESULTS is a finished matrix's results/ (read only; default: results). msgspec is no dependency
of crmatrix: install it where this runs (a scratch virtualenv, or `pip install msgspec`).
It prints, and with --write keeps in benchmarks/results/serializer-<date>.md:
  1. the bytes: every run, cell and the phase matrix (what tests/roundtrip.py checks) parsed and
     written again by msgspec (`Encoder(order="sorted")`, then `json.format(indent=2)` and a newline,
     the nearest it comes to `atomic.write_json`) against the file: files identical, files
     differing, the first differing byte in context, the floats msgspec spells otherwise; the same
     with each float handed to msgspec as Python spells it (`msgspec.Raw`); the file read by
     msgspec's parser into today's types and written by today's writer; and the values where the
     spellings part (Python's `json` and msgspec, and pydantic-core's `to_json` where installed);
  2. msgspec decoding a run straight into `Run` (its typed decoder, the part that would replace
     jsontypes' readers): what comes back, and whether it writes the same bytes;
  3. reading every run file (`Run.read`, as the cell and matrix jobs read them) against msgspec
     parsing it into the same types, the parse alone, the types alone, and msgspec's typed decode;
  4. writing every run the workflow's way against msgspec's (plain, and with Python's floats);
     3 and 4 in turns, median and fastest of N rounds, with the load before and after.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from timing import TODAY, new_result, out_lines, say, uptime

from crmatrix import atomic
from crmatrix.results.cell import Cell
from crmatrix.results.matrix import PhaseMatrix
from crmatrix.results.run import Run

try:
    import msgspec
except ImportError:  # --help still answers; main() says what to install
    msgspec = None

ENCODER = msgspec.json.Encoder(order="sorted") if msgspec else None
# Values whose spelling may part: Python's float repr switches to an exponent below 1e-4 and from
# 1e16; JSON has no NaN or infinity (Python writes NaN, Infinity); strings with non-ASCII and
# control characters; empty containers under indentation.
EDGES = [1e-05, 9.999000099990002e-05, 2.5e-07, 0.0001, 1e16, 1.2345678901234568e17, -0.0, 1.0, 19,
         float("nan"), float("inf"), "é ∑ \u2028 \x7f \x01 </", {}, [], {"b": [], "a": {}}]


def as_written(obj) -> bytes:
    """JSON as crmatrix.atomic.write_json writes it."""
    return (json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()


def msgspec_written(obj) -> bytes:
    """The nearest msgspec comes to it: sorted keys, then indented by two, and a newline."""
    return msgspec.json.format(ENCODER.encode(obj), indent=2) + b"\n"


def python_floats(value):
    """`value` with each float a `msgspec.Raw` of Python's spelling: msgspec then writes its bytes."""
    if type(value) is float:
        return msgspec.Raw(json.dumps(value).encode())
    if type(value) is dict:
        return {k: python_floats(v) for k, v in value.items()}
    if type(value) is list:
        return [python_floats(v) for v in value]
    return value


def floats(value):
    """Every float in a parsed JSON value."""
    if type(value) is float:
        yield value
    elif type(value) is dict:
        for v in value.values():
            yield from floats(v)
    elif type(value) is list:
        for v in value:
            yield from floats(v)


def first_difference(a: bytes, b: bytes) -> int:
    return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))


def kinds(results: Path) -> dict[str, tuple[type, list[Path]]]:
    """The files tests/roundtrip.py reads back, by kind, with their types."""
    return {"runs": (Run, sorted(results.glob("runs/*/*/*.json"))),
            "cells": (Cell, sorted(results.glob("cells/*/*/*.json"))),
            "phase matrix": (PhaseMatrix, [results / "matrix" / "phase-matrix.json"])}


def shown(written: bytes) -> str:
    """JSON text for a table cell: a newline as ⏎, another unprintable character as <U+XXXX>."""
    text = written.decode().rstrip("\n").replace("\n", "⏎")
    return "".join(c if c.isprintable() else f"<U+{ord(c):04X}>" for c in text)


def bytes_section(results: Path) -> None:
    say("## 1. The bytes: each file parsed and written again")
    say("")
    say("| files | n | msgspec writes the same bytes | differ | floats spelled otherwise (in files) | bytes msgspec "
        "writes minus the file's | msgspec with Python's floats: same bytes | msgspec's parser, today's types and "
        "writer: same bytes |")
    say("|---|---:|---:|---:|---:|---:|---:|---:|")
    first, differ, total = None, 0, 0
    for kind, (cls, paths) in kinds(results).items():
        same = spelled = in_files = delta = raw = kept = 0
        for path in paths:
            data = path.read_bytes()
            doc = msgspec.json.decode(data)
            written = msgspec_written(doc)
            same += written == data
            delta += len(written) - len(data)
            parted = sum(json.dumps(f) != ENCODER.encode(f).decode() for f in floats(doc))
            spelled, in_files = spelled + parted, in_files + bool(parted)
            raw += msgspec_written(python_floats(doc)) == data
            kept += as_written(cls.from_json(doc, str(path)).to_json()) == data
            if written != data and first is None:
                first = (path, first_difference(written, data), data, written)
        differ, total = differ + len(paths) - same, total + len(paths)
        say(f"| {kind} | {len(paths)} | {same} | {len(paths) - same} | {spelled} ({in_files}) | {delta:+,} | "
            f"{raw} of {len(paths)} | {kept} of {len(paths)} |")
    say("")
    say("With msgspec's own writer the whole-run round trip (tests/roundtrip.py) "
        + (f"fails: {differ} of {total} files differ." if differ else f"holds: all {total} files are the same bytes."))
    say("")
    if first:
        path, at, data, written = first
        say(f"The first differing file: `{path.relative_to(results)}`, at byte {at:,} of {len(data):,}:")
        say("")
        say(f"    file:    {data[max(0, at - 40):at + 30]!r}")
        say(f"    msgspec: {written[max(0, at - 40):at + 30]!r}")
        say("")
    say("The values where the spellings part (each written alone, indented; newlines as ⏎, other unprintable "
        "characters as <U+XXXX>):")
    say("")
    try:
        import pydantic_core
    except ImportError:
        pydantic_core = None
    columns = {"Python json (atomic.write_json)": as_written, "msgspec": msgspec_written}
    if pydantic_core:  # it has no sort_keys: keys come in their dict's order
        columns["pydantic-core to_json"] = lambda v: pydantic_core.to_json(v, indent=2)
    say("| value | " + " | ".join(columns) + " | " + " | ".join(f"{c}: as Python" for c in list(columns)[1:]) + " |")
    say("|---|" + "---|" * (2 * len(columns) - 1))
    for value in EDGES:
        spelled = [shown(write(value)) for write in columns.values()]
        say(f"| `{value!r}` | " + " | ".join(f"`{s}`" for s in spelled) + " | "
            + " | ".join("same" if s == spelled[0] else "**differs**" for s in spelled[1:]) + " |")
    say("")


def typed_section(results: Path) -> None:
    say("## 2. msgspec's typed decoder: a run straight into `Run`")
    say("")
    paths = kinds(results)["runs"][1]
    decoder = msgspec.json.Decoder(Run)
    same, lost, floated = 0, 0, 0
    for path in paths:
        data = path.read_bytes()
        doc, run = json.loads(data), decoder.decode(data)
        same += as_written(run.to_json()) == data
        lost += run.provenance.system.settings != {k: v for k, v in doc["provenance"]["system"].items()
                                                   if k not in ("name", "methods")}
        floated += any(type(m.metrics.get("n")) is float for m in run.methods.values())
    say(f"Of {len(paths)} runs, {same} write the same bytes again. `msgspec.json.Decoder(Run)` takes the "
        "dataclasses, but not what jsontypes adds to them: in "
        f"{lost} runs the system's settings (jsontypes' `rest()`: every key no field names) come back empty, "
        f"and in {floated} a method's `n`, an integer under a `float` annotation, comes back a float "
        "(written with a `.0`); a cell's comparison and a matrix cell's correction (`flat()`: a "
        "nested type whose keys sit in its parent) have no counterpart at all, a key named otherwise "
        "than its field (`key()`) none on a dataclass, and the run's checksum key is dropped unchecked.")
    say("")


def timed(repeats: int, **timers) -> dict[str, list[float]]:
    """Each timer's seconds over `repeats` rounds, taking turns within a round (same load)."""
    times: dict[str, list[float]] = {name: [] for name in timers}
    for _ in range(repeats):
        for name, timer in timers.items():
            t0 = time.perf_counter()
            timer()
            times[name].append(time.perf_counter() - t0)
    return times


def timing_section(results: Path, repeats: int) -> None:
    paths = kinds(results)["runs"][1]
    size = sum(p.stat().st_size for p in paths)
    docs = [atomic.read_json(p) for p in paths]
    typed = msgspec.json.Decoder(Run)
    plain = msgspec.json.Decoder()
    readers = {
        "today: `Run.read` (json.loads, checksum, jsontypes' compiled reader)": lambda: [Run.read(p) for p in paths],
        "msgspec parses, then today's types: `Run.from_json(msgspec.json.decode(bytes))`":
            lambda: [Run.from_json(plain.decode(p.read_bytes()), str(p)) for p in paths],
        "the parse alone, json: `json.loads(read_text())`": lambda: [atomic.read_json(p) for p in paths],
        "the parse alone, msgspec: `msgspec.json.decode(read_bytes())`":
            lambda: [plain.decode(p.read_bytes()) for p in paths],
        "today's types alone on parsed runs: `Run.from_json(doc)` (checksum included)":
            lambda: [Run.from_json(d) for d in docs],
        "msgspec's typed decode: `msgspec.json.Decoder(Run)` (loses bytes, see 2; no checksum)":
            lambda: [typed.decode(p.read_bytes()) for p in paths],
    }
    writers = {
        "today: `atomic.write_json`'s text (json.dumps, indent 2, sorted)": lambda: [as_written(d) for d in docs],
        "msgspec: `Encoder(order='sorted')` + `json.format(indent=2)`": lambda: [msgspec_written(d) for d in docs],
        "msgspec with Python's floats (`msgspec.Raw`; NaN and infinity it refuses)":
            lambda: [msgspec_written(python_floats(d)) for d in docs],
    }
    for title, timers in (("3. Reading", readers), ("4. Writing (to bytes in memory)", writers)):
        say(f"## {title} every run file: {len(paths)} files, {size:,} bytes (s, all files, {repeats} rounds "
            "in turns)")
        say("")
        say(f"Load before: `{uptime()}`.")
        say("")
        times = timed(repeats, **timers)
        base = statistics.median(next(iter(times.values())))
        say("| how | median s | fastest s | median against today's |")
        say("|---|---:|---:|---:|")
        for name, t in times.items():
            say(f"| {name} | {statistics.median(t):.3f} | {min(t):.3f} | {statistics.median(t) / base:.2f}× |")
        say("")
        say(f"Load after: `{uptime()}`.")
        say("")


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="benchmarks/serializer.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", type=Path, nargs="?", default=Path("results"),
                        help="a finished matrix's results/ directory, only read (default: results)")
    parser.add_argument("--repeats", type=int, default=5, help="timed rounds of each figure (default: 5)")
    parser.add_argument("--write", action="store_true",
                        help="write the report to benchmarks/results/serializer-<date>.md too (a tracked file)")
    args = parser.parse_args()
    if not (args.results / "runs").is_dir() or not (args.results / "matrix" / "phase-matrix.json").is_file():
        parser.error(f"{args.results}: no runs/ and matrix/phase-matrix.json: not a finished matrix's results")
    return args


def main() -> None:
    args = arguments()
    if msgspec is None:
        sys.exit("serializer.py: needs msgspec (no crmatrix dependency): pip install msgspec, in a scratch virtualenv")
    say(f"# msgspec against crmatrix's own JSON — {TODAY}")
    say("")
    say(f"Results read: `{args.results.resolve()}`; msgspec {msgspec.__version__}, Python "
        f"{sys.version.split()[0]}. The machine is shared: read the timings against each other, "
        "within this run.")
    say("")
    bytes_section(args.results)
    typed_section(args.results)
    timing_section(args.results, args.repeats)
    if args.write:
        dest = new_result(f"serializer-{TODAY}")
        dest.write_text("\n".join(out_lines) + "\n")
        print(f"wrote {dest}")


if __name__ == "__main__":
    main()
