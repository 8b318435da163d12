"""Each arm against the baseline per language, on one method, from a finished run (issue 47: the
BM25 tokenizer as a decided knob), run by hand (not in CI):

    make run CONFIG=config/seed-matrix.yaml         # in a clean clone (or config/swe-qa.yaml)
    .venv/bin/python benchmarks/arms_by_language.py CLONE --config config/seed-matrix.yaml \
        [--method bm25] [--arms bm25-whole-ids,bm25-no-stem] [--note TEXT] [--out FILE | --write]

reads the run's phase matrix (each row's language, split and corpus) and its runs, and prints per
arm and language the paired difference of METHOD's MRR (arm − baseline, the same queries) with
its 95 % bootstrap interval and its verdict (better or worse when the interval leaves out 0):
the phase matrix judges its headline method, and an arm of BM25's tokenizer moves `bm25` alone.
Datasets as written (hand-written or a benchmark's) and derived ones (scored on a view of their
corpus: hundreds of queries each) are pooled apart, then the languages of each together; structural
splits (the same queries, other gold) are left out. `--write`: to
benchmarks/results/arms-by-language-<config name>-<date>-clean.md (a tracked file).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import finished_run
import paired

from crmatrix.corpora import views

DERIVED, WRITTEN = "derived", "as written"


def groups(matrix: dict, system: str) -> dict[tuple[str, str], list[str]]:
    """(language, kind) -> the datasets of `system`'s rows pooled there, structural splits left out."""
    out: dict[tuple[str, str], list[str]] = {}
    for r in matrix["rows"]:
        if r["system"] != system or r["split"] == "structural":
            continue
        kind = DERIVED if views.SEPARATOR in r["corpus"] else WRITTEN
        out.setdefault((r["language"] or "unknown", kind), []).append(r["dataset"])
    return dict(sorted(out.items()))


def main() -> None:
    p = finished_run.parser("arms_by_language.py", __doc__, "arms-by-language")
    p.add_argument("--config", required=True, help="the config the run made (its report names it)")
    p.add_argument("--method", default="bm25", help="the method the arms are judged on (default bm25)")
    p.add_argument("--system", default="builtin", help="the system whose runs are read (default builtin)")
    p.add_argument("--arms", default="", help="comma-separated arms (default: every arm but the baseline)")
    args = p.parse_args()
    clone = args.clone.resolve()
    matrix = json.loads((clone / "results" / "matrix" / "phase-matrix.json").read_text())
    base = matrix["baseline_arm"]
    arms = [a for a in args.arms.split(",") if a] or [a for a in matrix["arms"] if a != base]
    unknown = [a for a in arms if a not in matrix["arms"]]
    if unknown:
        raise SystemExit(f"--arms: {', '.join(unknown)} not in the run's arms ({', '.join(matrix['arms'])})")
    by_group = groups(matrix, args.system)
    kinds = sorted({k for _, k in by_group})
    for kind in kinds:  # the languages of a kind pooled too, when it has more than one
        languages = [lang for lang, k in by_group if k == kind]
        if len(languages) > 1:
            by_group[("all", kind)] = [d for (lang, k), ds in list(by_group.items()) if k == kind for d in ds]

    @functools.cache  # a run is in its language's group and in the pool of all: read once
    def run(dataset: str, arm: str) -> dict:
        return json.loads((clone / "results" / "runs" / dataset / args.system / f"{arm}.json").read_text())

    def runs(datasets: list[str], arm: str) -> list[dict]:
        return [run(d, arm) for d in datasets]

    lines = finished_run.run_lines(clone, args.note, f"Each arm against the baseline per language ({args.method})",
                                   args.config)
    lines += [f"`{args.method}`'s MRR, each arm against `{base}` on the same queries (paired; Δ = arm − baseline, "
              "95 % bootstrap interval over the queries pooled); better or worse when the interval leaves out 0. "
              f"Datasets {WRITTEN} and {DERIVED} ones are pooled apart; structural splits are left out.", "",
              "| arm | language | datasets | queries | Δ MRR [95 % CI] | verdict |",
              "|---|---|---:|---:|---:|---|"]
    for arm in arms:
        for (language, kind), datasets in by_group.items():
            d = paired.delta(runs(datasets, base), runs(datasets, arm), args.method)
            lines.append(f"| {arm} | {language}, {kind} | {len(datasets)} | {d['n']} | {paired.cell(d)} | "
                         f"{paired.verdict(d)} |")
    finished_run.emit(lines, args.out, args.write, f"arms-by-language-{Path(args.config).stem}")


if __name__ == "__main__":
    main()
