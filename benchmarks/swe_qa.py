"""SWE-QA at full size, the figures of issue 22, run by hand (not in CI):

    make run CONFIG=config/swe-qa.yaml              # in a clean clone, cold
    .venv/bin/python benchmarks/swe_qa.py CLONE [--note TEXT] [--out FILE | --write]

reads the finished run in CLONE and prints its report; `--out FILE` writes it to FILE too,
`--write` to benchmarks/results/swe-qa-<date>-clean.md (a tracked file). The report: the run's
wall time from its Snakemake log, per repository the questions kept, the row's MDE, the headline
method's MRR and recall@10 with their intervals, and recall@10 pooled over the nine repositories
(random effects, each repository a study with its per-query variance) per arm, beside the matrix's
pooled MRR verdict per arm. `--note`: a line about the machine (its load) for the reader.
"""

from __future__ import annotations

import datetime
import json

import finished_run
import timing

from crmatrix.analysis import meta
from crmatrix.evaluation import metrics


def recall_study(run: dict, method: str) -> tuple[float, float, int]:
    """(mean recall@10, its sampling variance, n) of a run's method over its queries."""
    values = metrics.per_query(run["methods"][method]["queries"], "recall@10")
    return float(values.mean()), float(values.var(ddof=1)) / len(values), len(values)


def main() -> None:
    args = finished_run.parser("swe_qa.py", __doc__, "swe-qa").parse_args()
    clone, note = args.clone.resolve(), args.note
    matrix = json.loads((clone / "results" / "matrix" / "phase-matrix.json").read_text())
    commit = timing.commit(clone)
    wall, jobs = finished_run.wall_time(clone)
    rows = sorted((r for r in matrix["rows"] if not r["split"]), key=lambda r: r["dataset"])
    arms = matrix["arms"]
    base = matrix["baseline_arm"]
    power = {(p["dataset"], p["system"]): p for p in matrix["power"]["rows"]}
    lines = [f"# SWE-QA at full size, from a clean clone — {datetime.date.today().isoformat()}", "",
             f"`make run CONFIG=config/swe-qa.yaml` in a clean clone of crmatrix at {commit}, cold (empty "
             "`results/`, empty embedding cache, the ONNX model exported on the way), "
             f"{len(rows)} repositories, {len(arms)} arms, the builtin's four methods. {note}".rstrip(), "",
             f"Snakemake wall time of the run: **{wall / 60:.1f} min** for {jobs} jobs "
             "(from its log's first to last time stamp; `make run`'s venv install and report come on top).", "",
             "## Per repository (the headline method; 95 % bootstrap intervals)", "",
             "| dataset | method | n | MDE (MRR) | baseline MRR | baseline recall@10 |",
             "|---|---|---:|---:|---:|---:|"]
    studies: dict[str, list[tuple[float, float, int]]] = {arm: [] for arm in arms}
    for r in rows:
        cell = r["cells"][base]
        p = power[(r["dataset"], r["system"])]
        runs = {arm: json.loads((clone / "results" / "runs" / r["dataset"] / r["system"] / f"{arm}.json").read_text())
                for arm in arms}
        for arm in arms:
            studies[arm].append(recall_study(runs[arm], r["method"]))
        recall, var, n = studies[base][-1]
        low, high = meta.normal_interval(recall, var ** 0.5)
        lines.append(f"| {r['dataset']} | {r['method']} | {r['n']} | ±{p['mde']:.3f} ({p['mde_rel']:.0%}) | "
                     f"{cell['mrr']:.3f} [{cell['ci_low']:.2f}, {cell['ci_high']:.2f}] | "
                     f"{recall:.3f} [{low:.2f}, {high:.2f}] |")
    lines += ["", f"{sum(r['n'] for r in rows)} questions kept in all.", "",
              "## Pooled over the repositories", "",
              "recall@10 per arm pooled by random effects (DerSimonian–Laird; each repository a study, its "
              "variance the per-query variance / n; normal 95 % interval), and the matrix's pooled MRR Δ "
              "against the baseline with its verdict (the `power` block's SWE-QA group).", "",
              "| arm | pooled recall@10 [95 % CI] | I² | pooled Δ MRR [95 % CI] | verdict |",
              "|---|---:|---:|---:|---|"]
    group = next((g for g in matrix["power"]["groups"] if g["kind"] == "benchmark" and g["group"] == "swe-qa"), None)
    for arm in arms:
        pooled = meta.random_effects([s[0] for s in studies[arm]], [s[1] for s in studies[arm]])
        i2 = "—" if pooled["i2"] is None else f"{pooled['i2']:.0%}"
        judged = (group or {}).get("arms", {}).get(arm)
        mrr = ("reference" if arm == base else "no query moved" if judged is None else
               f"{judged['delta']:+.3f} [{judged['ci'][0]:+.3f}, {judged['ci'][1]:+.3f}]")
        lines.append(f"| {arm} | {pooled['estimate']:.3f} [{pooled['ci_low']:.3f}, {pooled['ci_high']:.3f}] | "
                     f"{i2} | {mrr} | {judged['verdict'] if judged else ''} |")
    if group:
        mde = "none (no arm moved 10 % of its queries)" if group["mde"] is None else f"{group['mde']:.3f}"
        lines += ["", f"The SWE-QA pool: {group['datasets']} datasets, {group['queries']} queries, pooled MDE "
                  f"(median over the arms moving 10 % of its queries) {mde}."]
    finished_run.emit(lines, args.out, args.write, "swe-qa")


if __name__ == "__main__":
    main()
