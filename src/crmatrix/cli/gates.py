"""`crmatrix check` and `crmatrix promote`: CI gates on a run, and a run kept as a baseline."""

from __future__ import annotations

from pathlib import Path

from crmatrix import CrmatrixError, atomic

# The significance level of a baseline gate (analysis.baseline.ALPHA), for the help text.
GATE_ALPHA = 0.05


def read_run(path: str):
    from crmatrix.results.run import Run

    try:
        return Run.read(Path(path))
    except OSError as e:
        raise CrmatrixError(f"{path}: cannot read the run: {e.strerror}") from None


def cmd_check(args) -> int:
    from crmatrix.analysis import baseline, check

    gates = check.parse_gates(args.min or [], args.max or [])
    drops = [check.parse_drop(t) for t in args.max_drop or []]
    if bool(drops) != bool(args.baseline):
        raise CrmatrixError("check: --max-drop and --baseline go together (e.g. --baseline baselines/X.json "
                            "--max-drop hybrid.mrr=0.02)")
    if not gates and not drops:
        raise CrmatrixError("check: give at least one --min, --max or --max-drop gate (e.g. --min hybrid.mrr=0.5)")
    run = read_run(args.run)  # after the gates: a misspelled one is a usage error, whatever the file
    failures = check.check(run, gates)
    for line in failures:
        print(f"FAIL {line}")
    if drops:
        record = baseline.read(Path(args.baseline))
        baseline.comparable(record, run, args.baseline, args.run)
        results = baseline.gate(record, run, drops, args.run)
        for r in results:
            print(baseline.describe(r))
        failures += [r for r in results if not r["pass"]]
    total = len(gates) + len(drops)
    print(f"{args.run}: {total - len(failures)} of {total} gates passed")
    return 1 if failures else 0


def cmd_promote(args) -> int:
    from crmatrix.analysis import baseline

    record = baseline.promote(read_run(args.run), args.run)
    out = Path(args.out) if args.out else baseline.default_path(record)
    atomic.write_json(out, record)
    summary = "; ".join(f"{m}.mrr {r['metrics']['mrr']:.3f} [{r['ci']['mrr'][0]:.3f}, {r['ci']['mrr'][1]:.3f}]"
                        for m, r in record["methods"].items())
    print(f"wrote {out}: {record['dataset']['name']} · {record['system']['name']} ({record['system_version']}) · "
          f"{record['arm']['name']}: {summary}")
    return 0
