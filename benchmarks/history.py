"""Localization from a repository's own history (issue 49), run by hand (not in CI):

    make run CONFIG=config/history.yaml             # in a clean clone, cold
    .venv/bin/python benchmarks/history.py CLONE [--note TEXT] [--out FILE | --write]

reads the finished run in CLONE and prints its report; `--out FILE` writes it to FILE too,
`--write` to benchmarks/results/history-<date>-clean.md (a tracked file). The report:

1. the run: cold or not and its wall time (the clone's Snakemake logs), and the CPU seconds of
   each rule (Snakemake's benchmark files);
2. per repository: the tasks kept, the drops by reason, the leaky share (a message naming a
   gold file or function);
3. per repository and language (one repository per language here, so its figures are the
   language's pool), every method of the builtin under the baseline arm: file Acc@1, Acc@5,
   Acc@10 (every gold file within the top k) and MRR with their 95 % bootstrap intervals, over
   every task and over the tasks that are not leaky;
4. per language, what the matrix decided of each arm against the baseline (its power section:
   the headline method's MRR, the arm's pooled interval against the flat band).

The figures are the phase matrix's (results/matrix/phase-matrix.json): nothing here computes a
statistic again.
"""

from __future__ import annotations

import sys
from pathlib import Path

import finished_run
from clocks import cpu_by_rule
from compared import MATRIX

from crmatrix.results.matrix import PhaseMatrix

CONFIG = "config/history.yaml"
METRICS = {"acc_all@1": "Acc@1", "acc_all@5": "Acc@5", "acc_all@10": "Acc@10", "mrr": "MRR"}


def read_matrix(clone: Path) -> PhaseMatrix:
    path = clone / MATRIX
    if not path.is_file():
        sys.exit(f"{path}: no phase matrix, so no finished run to read")
    return PhaseMatrix.read(path)


def cost_lines(clone: Path) -> list[str]:
    rules = dict(sorted(cpu_by_rule(clone).items(), key=lambda kv: -kv[1][2]))
    lines = ["| rule | jobs | wall s | CPU s |", "|---|---:|---:|---:|"]
    lines += [f"| {rule} | {n} | {s:.1f} | {cpu:.1f} |" for rule, (n, s, cpu) in rules.items()]
    total = sum(cpu for _, _, cpu in rules.values())
    return lines + [f"| total | {sum(n for n, _, _ in rules.values())} | | {total:.1f} |"]


def _figure(s) -> str:
    return f"{s.mean:.3f} [{s.ci_low:.2f}, {s.ci_high:.2f}]"


def task_lines(m: PhaseMatrix) -> list[str]:
    lines = ["| dataset | language | tasks | leaky | leaky share | dropped | dropped by reason |",
             "|---|---|---:|---:|---:|---:|---|"]
    languages = language_of(m)
    for e in m.benchmarks:
        d = e.dropped
        gold = d.gold or {}
        reasons = "; ".join(f"{r} {n}" for r, n in sorted(d.by_reason.items()))
        lines.append(f"| {e.dataset} | {languages.get(e.dataset, '?')} | {d.tasks} | {gold.get('leaky', 0)} | "
                     f"{100 * gold.get('leaky_share', 0.0):.1f} % | {d.dropped} | {reasons} |")
    return lines


def language_of(m: PhaseMatrix) -> dict[str, str]:
    return {d: r.language for r in m.by_language for d in r.datasets}


def score_lines(m: PhaseMatrix) -> list[str]:
    languages = language_of(m)
    lines = []
    for e in m.benchmarks:
        methods = e.methods.get(m.baseline_arm, {})
        clean = {method: (b.strata or {}).get("clean") for method, b in methods.items()}
        n_clean = next((s.n for s in clean.values() if s is not None), 0)
        lines += [f"### {e.dataset} ({languages.get(e.dataset, '?')})", "",
                  f"Every task ({e.dropped.tasks}), then the {n_clean} that are not leaky.", "",
                  "| method | tasks | " + " | ".join(METRICS.values()) + " |", "|---|---|" + "---|" * len(METRICS)]
        for method in sorted(methods, key=lambda x: (x != e.method, x)):
            name = f"{method} (headline)" if method == e.method else method
            lines.append(f"| {name} | all | " + " | ".join(_figure(methods[method].scores[k]) for k in METRICS) + " |")
            if clean[method] is not None:
                lines.append(f"| {name} | not leaky | "
                             + " | ".join(_figure(clean[method].scores[k]) for k in METRICS) + " |")
        lines.append("")
    return lines


def decided_lines(m: PhaseMatrix) -> list[str]:
    p = m.power
    lines = [f"Per language, each arm against `{m.baseline_arm}` on the headline method ({p.method}), "
             f"{p.metric}: its pooled Δ with its 95 % interval, and the verdict (positive or negative: the "
             "interval lies wholly beyond the flat band; flat: within it; undecided: across an edge of it; an arm "
             "that moved no query of the language has nothing to pool).", "",
             "| language | queries | arm | Δ | 95 % interval | MDE | moved | verdict |",
             "|---|---:|---|---:|---|---:|---:|---|"]
    for g in p.groups:
        if g.kind != "language":
            continue
        for arm in sorted(a for a in m.arms if a != m.baseline_arm):
            j = g.arms.get(arm)
            lines.append(f"| {g.group} | {g.queries} | {arm} | — | — | — | 0 | moved no query |" if j is None else
                         f"| {g.group} | {g.queries} | {arm} | {j.delta:+.3f} | [{j.ci[0]:+.3f}, {j.ci[1]:+.3f}] | "
                         f"±{j.mde:.3f} | {j.moved} | {j.verdict} |")
    return lines


def main() -> None:
    args = finished_run.parser("history.py", __doc__, "history").parse_args()
    clone = args.clone.resolve()
    m = read_matrix(clone)
    lines = finished_run.run_lines(clone, args.note, "Localization from history", CONFIG)
    lines += ["## Where the time went", "", "Each rule's jobs (Snakemake's benchmark files), by CPU seconds.", "",
              *cost_lines(clone), "",
              "## The tasks", "",
              "A kept commit's message against the non-test source files it modifies, at its parent; leaky: the "
              "message names a gold file's path or basename, or a changed function.", "",
              *task_lines(m), "",
              "## Every method at file level", "",
              "The builtin's methods under the baseline arm, with 95 % bootstrap intervals (1000 resamples, seed 0); "
              "Acc@k: every gold file within the top k.", "",
              *score_lines(m),
              "## The arms decided per language", "", *decided_lines(m)]
    finished_run.emit(lines, args.out, args.write, "history")


if __name__ == "__main__":
    main()
