"""gate_candidates: each `compare:` pair of the config, the candidate gated against the release
on every dataset both ran (crmatrix.analysis.baseline), as JSON and as the text `make run` prints."""

from __future__ import annotations

from pathlib import Path

from crmatrix import atomic
from crmatrix.analysis import baseline, check
from crmatrix.results.run import Run

HEADER = (f"A candidate FAILs a dataset when its metric drops below the release's by more than the max drop "
          f"and the paired randomization test over that dataset's queries gives p < {baseline.ALPHA:g} "
          "(each dataset is its own gate, as in crmatrix check --baseline).")


def judge(pairs: dict[str, dict], runs: list[Run]) -> dict:
    by_key = {(r.dataset, r.system, r.arm): r for r in runs}
    out = {}
    for name, pair in pairs.items():
        rel, cand = pair["release"], pair["candidate"]
        gates = [check.parse_drop(f"{g}={drop}") for g, drop in pair["max_drop"].items()]
        per = {}
        for dataset in sorted({d for d, _, _ in by_key}):
            r, c = by_key.get((dataset, rel["system"], rel["arm"])), by_key.get((dataset, cand["system"], cand["arm"]))
            if r is None or c is None:
                continue
            record = baseline.promote(r, f"{rel['system']}@{rel['arm']}")
            baseline.comparable(record, c, record["promoted_from"], f"{cand['system']}@{cand['arm']}")
            per[dataset] = baseline.gate(record, c, gates)
        failed = [d for d, results in per.items() if not all(x["pass"] for x in results)]
        out[name] = {**pair, "datasets": per, "failed": failed, "pass": not failed}
    return out


def to_text(verdicts: dict) -> str:
    if not verdicts:
        return "Release vs candidate: no pairs in the config (compare:).\n"
    lines = ["Release vs candidate", "", HEADER, ""]
    for name, v in verdicts.items():
        rel, cand = (f"{v[s]['system']}@{v[s]['arm']}" for s in ("release", "candidate"))
        lines.append(f"{name}: candidate {cand} against release {rel}")
        for dataset, results in v["datasets"].items():
            lines += [f"  {dataset}: {baseline.describe(x)}" for x in results]
        verdict = (f"PASS on all {len(v['datasets'])} datasets" if v["pass"] else
                   f"FAIL on {len(v['failed'])} of {len(v['datasets'])} datasets ({', '.join(v['failed'])})")
        lines += [f"{name}: {verdict}", ""]
    return "\n".join(lines)


def run(runs: list[Path], pairs: dict[str, dict], json_out: Path, txt_out: Path) -> dict:
    verdicts = judge(pairs, [Run.read(Path(p)) for p in runs])
    atomic.write_json(Path(json_out), verdicts)
    atomic.write_text(Path(txt_out), to_text(verdicts))
    return verdicts
