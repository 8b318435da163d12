"""Whether two finished runs of one config wrote the same results, timings aside (issue 45: a
refactor changes no result byte), run by hand (not in CI):

    .venv/bin/python benchmarks/identical.py CLONE_A CLONE_B --config CONFIG [--note TEXT] [--out FILE | --write]

compares every file of CLONE_A/results/runs and results/matrix with CLONE_B's: the JSON files
with their timings left out (TIMINGS: each query's and method's latency, the index's seconds, a
run's preparation seconds, the checksums over them, and which texts an index embedded or found
in the cache, which the order of the jobs decides), every other file byte for byte, and names
each file one run lacks. A JSON file equal but for timings counts as identical; a Markdown
file whose only differing lines hold timings (the leaderboard's p50/p95, the latency panel) is
listed with those lines, for the reader to see they are timings. `--write`:
benchmarks/results/identical-<config name>-<date>-clean.md.
"""

from __future__ import annotations

import argparse
import datetime
import difflib
import fnmatch
import json
from pathlib import Path

import finished_run
import timing

# keys whose values a second run of the same inputs changes: measured times (and the checksums
# over them), and which of an index's texts its job embedded or found in the cache (the order the
# jobs ran in: the index that ran first embedded the texts another shares), and a versioned
# index's whole build account (`index_embedding`: which texts it took from an index built before
# it, the rest counted anew, as the order of the builds had it)
TIMINGS = frozenset({"elapsed_ms", "latency_ms", "prepare_s", "seconds", "embed_seconds", "load_seconds",
                     "checksum", "p50_ms", "p95_ms", "latency", "query_ms", "index_s", "index_seconds",
                     "embedded", "cached", "index_embedding"})
DIRS = ("runs", "matrix")


def without_timings(value):
    """`value` with every TIMINGS key left out, at any depth."""
    if isinstance(value, dict):
        return {k: without_timings(v) for k, v in value.items() if k not in TIMINGS}
    if isinstance(value, list):
        return [without_timings(v) for v in value]
    return value


def changes(x, y, path: str = "") -> list[str]:
    """Where two JSON values differ, as `path: x -> y` lines (timings left out beforehand)."""
    if isinstance(x, dict) and isinstance(y, dict):
        return [line for k in sorted(set(x) | set(y), key=str)
                for line in changes(x.get(k, "<none>"), y.get(k, "<none>"), f"{path}.{k}")]
    if isinstance(x, list) and isinstance(y, list) and len(x) == len(y):
        return [line for i, (a, b) in enumerate(zip(x, y, strict=True)) for line in changes(a, b, f"{path}[{i}]")]
    return [] if x == y else [f"{path}: {json.dumps(x)[:100]} -> {json.dumps(y)[:100]}"]


def files(clone: Path, datasets: list[str]) -> dict[str, Path]:
    """The run and matrix files of a clone by their path under results/; with `datasets`
    (patterns), of the runs those of the datasets they match alone (a slice of a run)."""
    out = {str(p.relative_to(clone / "results")): p for d in DIRS
           for p in sorted((clone / "results" / d).rglob("*")) if p.is_file()}
    return {name: p for name, p in out.items() if not datasets or not name.startswith("runs/")
            or any(fnmatch.fnmatch(name.split("/")[1], d) for d in datasets)}


def compare(a: Path, b: Path, datasets: list[str] = ()) -> tuple[list[str], list[str], dict[str, list[str]], list[str]]:
    """(identical files, JSON files equal but for timings, other differing files and where they
    differ: a JSON file's values by their paths, timings aside, another file's lines; files one
    side lacks)."""
    fa, fb = files(a, datasets), files(b, datasets)
    same, timed, differ = [], [], {}
    for name in sorted(set(fa) & set(fb)):
        x, y = fa[name].read_bytes(), fb[name].read_bytes()
        if x == y:
            same.append(name)
        elif name.endswith(".json"):
            found = changes(without_timings(json.loads(x)), without_timings(json.loads(y)))
            if found:
                differ[name] = found
            else:
                timed.append(name)
        else:
            diff = difflib.unified_diff(x.decode().splitlines(), y.decode().splitlines(), lineterm="", n=0)
            differ[name] = [line for line in diff if line[:1] in "+-" and line[:3] not in ("+++", "---")]
    missing = sorted(set(fa) ^ set(fb))
    return same, timed, differ, missing


def main() -> None:
    p = argparse.ArgumentParser(prog="benchmarks/identical.py", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("a", type=Path, help="a clone holding a finished run")
    p.add_argument("b", type=Path, help="another, of the same config")
    p.add_argument("--config", required=True, help="the config both runs made")
    p.add_argument("--datasets", nargs="*", default=[],
                   help="of the runs, compare those of these datasets alone (patterns, e.g. '*-flask')")
    p.add_argument("--note", default="", help="a line about the runs for the reader")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--out", type=Path, help="write the report to this file too")
    where.add_argument("--write", action="store_true", help="write it to benchmarks/results/ too (a tracked file)")
    args = p.parse_args()
    a, b = args.a.resolve(), args.b.resolve()
    for clone in (a, b):
        if not (clone / "results" / "runs").is_dir():
            raise SystemExit(f"{clone}/results/runs: no finished run to compare")
    same, timed, differ, missing = compare(a, b, args.datasets)
    lines = [f"# The same results, timings aside — {datetime.date.today().isoformat()}", "",
             f"`{args.config}`{', the runs of ' + ', '.join(args.datasets) if args.datasets else ''}, "
             f"A: {a.name} at {timing.commit(a)}; B: {b.name} at {timing.commit(b)}. "
             f"{args.note}".rstrip(), "",
             f"- byte-identical: {len(same)} files", f"- identical but for timings ({', '.join(sorted(TIMINGS))}): "
             f"{len(timed)} files", f"- differing otherwise: {len(differ)} files", f"- in one run only: {len(missing)}"]
    lines += [f"  - `{m}`" for m in missing]
    for name, changed in differ.items():
        lines += ["", f"## `{name}`: {len(changed)} differences", "", "```"]
        lines += [line[:240] for line in changed[:40]] + (["..."] if len(changed) > 40 else []) + ["```"]
    finished_run.emit(lines, args.out, args.write, f"identical-{Path(args.config).stem}")


if __name__ == "__main__":
    main()
