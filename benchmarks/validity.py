"""Validity of history-derived tasks (issue 49, point 5), run by hand (not in CI):

    .venv/bin/snakemake --cores 2 all --configfile config/validity-requests.yaml
    .venv/bin/python benchmarks/validity.py [RUN] [--note TEXT] [--out FILE]

Do a repository's own commits rank systems as SWE-bench's issues do? On a finished run in RUN
(default: here) of a repository with both (config/validity-requests.yaml: requests), every
(method, arm) configuration of the system is ranked by its file Acc@5 (and, apart, its MRR)
over the history's tasks and over SWE-bench's (Lite and Verified pooled, a task in both counted
once); Kendall's tau-b and Spearman's rho between the two orders, with 95 % bootstrap intervals
resampling tasks within each set (1000 resamples, seed 0: crmatrix.analysis.agreement). The
per-task values are the cells' (`results/cells/DATASET/SYSTEM/ARM.json`: `method_benchmarks`),
their means checked against the phase matrix's (`benchmarks[].methods`). Configurations equal
on every task of both sets are one system, counted once. Prints a Markdown report; `--out FILE`
writes it there too.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from pathlib import Path

import numpy as np

from crmatrix.analysis import agreement
from crmatrix.results.cell import Cell

METRICS = {"acc_all@5": "file Acc@5", "mrr": "MRR"}


def arguments() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("run", nargs="?", type=Path, default=Path("."), help="the finished run's directory")
    p.add_argument("--history", default="history-requests", help="the history dataset")
    p.add_argument("--swe-bench", default="lite-requests,verified-requests",
                   help="the SWE-bench datasets pooled, comma-separated (the first's copy of a shared task kept)")
    p.add_argument("--system", default="builtin")
    p.add_argument("--note", default="", help="a line about the machine (its load)")
    p.add_argument("--out", type=Path, help="write the report to this file too")
    return p.parse_args()


def entry(matrix: dict, dataset: str, system: str, where: Path) -> dict:
    """The phase matrix's benchmark entry of (dataset, system), with every method's figures."""
    found = [e for e in matrix["benchmarks"] if e["dataset"] == dataset and e["system"] == system]
    if not found or not found[0].get("methods"):
        sys.exit(f"{where}: no benchmark entry of dataset {dataset}, system {system} with every method's "
                 f"figures (`methods`); it has {sorted(e['dataset'] for e in matrix['benchmarks'])}")
    return found[0]


def task_values(run: Path, e: dict, system: str, configs: list[tuple[str, str]]) -> tuple[list[str], dict]:
    """The dataset's task ids (sorted) and, per metric and configuration, its per-task values,
    read from the cells; each mean checked against the phase matrix's."""
    ids, out = None, {m: {} for m in METRICS}
    for method, arm in configs:
        path = run / "results" / "cells" / e["dataset"] / system / f"{arm}.json"
        cell = Cell.read(path)
        mine = [q.task_id for q in cell.queries]
        if ids is not None and mine != ids:
            sys.exit(f"{path}: other tasks than the dataset's other arms' cells")
        ids = mine
        for metric in METRICS:
            values = np.array(cell.method_benchmarks[method].values[metric])
            stated = e["methods"][arm][method]["scores"][metric]["mean"]
            if abs(values.mean() - stated) > 1e-12:
                sys.exit(f"{path}: {method} {metric} mean {values.mean()} is not the phase matrix's {stated}")
            out[metric][(method, arm)] = values
    return ids, out


def pooled(sets: list[tuple[list[str], dict]]) -> tuple[int, list[str], dict]:
    """SWE-bench's datasets as one task set: each task once (the first dataset's copy), the
    tasks dropped as copies."""
    seen, copies, keep = set(), [], []
    for ids, _ in sets:
        keep.append([i not in seen for i in ids])
        copies += [i for i in ids if i in seen]
        seen.update(ids)
    values = {m: {c: np.concatenate([v[m][c][k] for (_, v), k in zip(sets, keep, strict=True)])
                  for c in sets[0][1][m]} for m in METRICS}
    return len(seen), copies, values


def ranking_table(configs, merged, hist: dict, swe: dict) -> list[str]:
    """Each configuration's mean and rank (1: best; ties share their mean rank) in each set."""
    h = np.array([hist[c].mean() for c in configs])
    s = np.array([swe[c].mean() for c in configs])
    rh, rs = (len(configs) + 1 - agreement.average_ranks(x) for x in (h, s))
    lines = ["| method | arm | history | rank | SWE-bench | rank | same on every task as |",
             "|---|---|---:|---:|---:|---:|---|"]
    for i, (method, arm) in enumerate(configs):
        same = ", ".join(merged.get(f"{method} · {arm}", []))
        lines.append(f"| {method} | {arm} | {h[i]:.3f} | {rh[i]:g} | {s[i]:.3f} | {rs[i]:g} | {same} |")
    return lines


def section(metric: str, configs: list[tuple[str, str]], kept: list[int], merged: dict, hist: dict,
            swe: dict) -> list[str]:
    """The two coefficients of the distinct configurations (`kept`) by `metric`, and their table."""
    a = np.array([hist[configs[i]] for i in kept])
    b = np.array([swe[configs[i]] for i in kept])
    lines = [f"## By {METRICS[metric]}", "",
             "| coefficient | value | 95 % interval | history's tasks resampled alone | SWE-bench's alone "
             "| resamples without one |", "|---|---:|---|---|---|---:|"]
    runs = [agreement.agreement(a, b, n_resamples=1000, seed=0, resample=r) for r in (("a", "b"), ("a",), ("b",))]
    for both, hist_alone, swe_alone in zip(*runs, strict=True):
        value = "undefined" if both.value is None else f"{both.value:.3f}"
        cis = ["none" if g.ci_low is None else f"[{g.ci_low:.2f}, {g.ci_high:.2f}]"
               for g in (both, hist_alone, swe_alone)]
        lines.append(f"| {both.name} | {value} | {' | '.join(cis)} | {both.undefined} |")
    lines += ["", "Within one method (its distinct arms; three or more), Kendall's tau-b: do the arms rank alike?", "",
              "| method | arms | kendall_tau | 95 % interval | resamples without one |", "|---|---:|---:|---|---:|"]
    for method in sorted({configs[i][0] for i in kept}):
        rows = [j for j, i in enumerate(kept) if configs[i][0] == method]
        if len(rows) < 3:
            continue
        tau = agreement.agreement(a[rows], b[rows], n_resamples=1000, seed=0)[0]
        value = "undefined" if tau.value is None else f"{tau.value:.3f}"
        ci = "none" if tau.ci_low is None else f"[{tau.ci_low:.2f}, {tau.ci_high:.2f}]"
        lines.append(f"| {method} | {len(rows)} | {value} | {ci} | {tau.undefined} |")
    return [*lines, "", *ranking_table([configs[i] for i in kept], merged, hist, swe), ""]


def distinct(configs: list[tuple[str, str]], hist: dict, swe: dict) -> tuple[list[int], dict]:
    """The configurations answering differently (`agreement.collapse_identical` on every metric's
    per-task values at once): two equal on one metric only are two systems that tie there."""
    names = [f"{m} · {a}" for m, a in configs]
    a = np.array([np.concatenate([hist[m][c] for m in METRICS]) for c in configs])
    b = np.array([np.concatenate([swe[m][c] for m in METRICS]) for c in configs])
    return agreement.collapse_identical(names, a, b)


def main() -> None:
    args = arguments()
    path = args.run / "results" / "matrix" / "phase-matrix.json"
    matrix = json.loads(path.read_text())
    hist_e = entry(matrix, args.history, args.system, path)
    swe_es = [entry(matrix, d, args.system, path) for d in args.swe_bench.split(",")]
    arms = matrix["arms"]  # the baseline first: a configuration equal to others is named by its first arm
    configs = sorted({(m, a) for a, ms in hist_e["methods"].items() for m in ms}
                     & set.intersection(*({(m, a) for a, ms in e["methods"].items() for m in ms} for e in swe_es)),
                     key=lambda c: (c[0], arms.index(c[1])))
    hist_ids, hist = task_values(args.run, hist_e, args.system, configs)
    sets = [task_values(args.run, e, args.system, configs) for e in swe_es]
    n_swe, copies, swe = pooled(sets)
    lines = [f"# Validity: {args.history} against SWE-bench ({', '.join(args.swe_bench.split(','))})", "",
             f"Report made {datetime.date.today().isoformat()} by `benchmarks/validity.py` from a run of "
             f"`config/validity-requests.yaml`, system {args.system}. {args.note}".rstrip(), "",
             f"Tasks: {len(hist_ids)} from the history; {n_swe} from SWE-bench "
             f"({' + '.join(str(len(ids)) for ids, _ in sets)}, {len(copies)} in both counted once: "
             f"{', '.join(copies) or 'none'}). Each (method, arm) ranked by its mean over each set; "
             "Kendall's tau-b and Spearman's rho between the two orders, 95 % percentile intervals "
             "from 1000 resamples of the tasks within each set (seed 0); beside them, the intervals "
             "with one set's tasks resampled and the other's kept as they are: how much of the "
             "width is each set's.", ""]
    kept, merged = distinct(configs, hist, swe)
    lines += [f"{len(kept)} distinct configurations of {len(configs)} ({len(configs) - len(kept)} answer as "
              "another on every task of both sets, by every metric: counted once).", ""]
    for metric in METRICS:
        lines += section(metric, configs, kept, merged, hist[metric], swe[metric])
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
