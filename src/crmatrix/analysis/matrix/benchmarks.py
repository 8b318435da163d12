"""The phase matrix's public benchmarks as Markdown: per benchmark split over datasets, its
pooled table, then per dataset its table of arms by metric (the headline method's), per stratum
and what the loader dropped; then every method of each system, pooled and per dataset."""

from __future__ import annotations

from crmatrix.results.cell import Scored
from crmatrix.results.matrix import BenchmarkEntry, PooledBenchmark


def ci_text(x: Scored) -> str:
    return f"{x.mean:.3f} [{x.ci_low:.2f}, {x.ci_high:.2f}]"


def _gold_text(gold: dict) -> str:
    """The loader's `gold` in words: swe-bench's candidate rule (crmatrix.datasets.swebench.
    describe_candidates), a history's leaky tasks (crmatrix.datasets.history.mark_leaky) beside
    its rule, or a citation format's names (crmatrix.datasets.citations.gold_by_name_alone)."""
    parts = []
    if "candidates" in gold:
        parts.append(f"candidate files: {gold['candidates']}; {gold['tasks_outside_candidates']} tasks with "
                     f"{gold['files_outside_candidates']} gold files outside them, kept as misses"
                     + ("; tasks: those that edit a function" if gold.get("tasks") == "functions" else ""))
    if "leaky" in gold:
        parts.append(f"{gold['leaky']} leaky tasks ({gold['leaky_share']:.0%}: the message names a gold file or "
                     "function)")
    if "by_name_alone" in gold:
        share = f" ({gold['by_name_alone'] / gold['files']:.0%})" if gold["files"] else ""
        parts.append(f"{gold['by_name_alone']} of {gold['files']} gold files cited by a name alone{share}")
    return "; ".join(parts)


def _rules(entries: tuple[BenchmarkEntry, ...], datasets: tuple[str, ...]) -> str:
    """The candidate rules the entries of `datasets` name (swe-bench's), as words for a pool's line."""
    golds = [e.dropped.gold for e in entries if e.dataset in datasets and e.dropped is not None
             and e.dropped.gold and "candidates" in e.dropped.gold]
    rules = sorted({g["candidates"] for g in golds})
    subsets = sorted({g.get("tasks", "all") for g in golds} - {"all"})
    return ((f"; candidate files: {', '.join(rules)}" if rules else "")
            + ("; tasks: those that edit a function" if subsets == ["functions"] else ""))


def benchmarks_md(entries: tuple[BenchmarkEntry, ...], pools: tuple[PooledBenchmark, ...],
                   arms: tuple[str, ...]) -> list[str]:
    """Per benchmark split over datasets, its pooled table of arms by metric; then per
    public-benchmark dataset: a table of arms by metric (95 % bootstrap intervals), the
    per-stratum table of the baseline arm (else of its first arm with strata), and what the
    loader dropped."""
    if not entries:
        return []
    lines = ["", "## Public benchmarks: recall and nDCG", "",
             "Per arm, the headline method's metrics with 95 % bootstrap intervals (1000 resamples, seed 0); "
             "file-level gold (SWE-QA) ranks each file at its first hit. pass@1 (RepoQA): the first hit is the "
             "needle or a function AST-equal to it." + (" A benchmark split by repository (swe-bench) comes first, "
                                                         "pooled over the tasks of all its splits as the field "
                                                         "reports it; its candidate files are named by the "
                                                         "rule that chose them (all, agentless, swerank, "
                                                         "locagent: docs/public-benchmarks.md)." if pools else ""),
             ""]
    for p in pools:
        lines += [f"**{p.benchmark} · {p.system}** ({p.format}, {p.method}), pooled: {p.n} tasks of "
                  f"{len(p.datasets)} datasets ({', '.join(p.datasets)}){_rules(entries, p.datasets)}", "",
                  "| arm | " + " | ".join(p.metrics) + " |", "|---|" + "---:|" * len(p.metrics)]
        for arm in (a for a in arms if a in p.arms):
            lines.append(f"| {arm} | " + " | ".join(ci_text(p.arms[arm][m]) for m in p.metrics) + " |")
        lines.append("")
    for e in entries:
        lines += [f"**{e.dataset} · {e.system}** ({e.format}, {e.method})", ""]
        if e.dropped is not None:
            d = e.dropped
            reasons = "; ".join(f"{n} {r}" for r, n in sorted(d.by_reason.items()))
            lines += [f"{d.tasks} tasks; {d.dropped} rows or citations dropped" + (f": {reasons}" if reasons else "")
                      + (f"; {_gold_text(d.gold)}" if d.gold else ""), ""]
        lines += ["| arm | " + " | ".join(e.metrics) + " |", "|---|" + "---:|" * len(e.metrics)]
        for arm in (a for a in arms if a in e.arms):
            lines.append(f"| {arm} | " + " | ".join(ci_text(e.arms[arm][m]) for m in e.metrics) + " |")
        stratified = [a for a in arms if e.strata.get(a)]
        if stratified:
            arm = stratified[0]  # the baseline, the first column, when it has strata
            lines += ["", f"By stratum ({arm}):", "", "| stratum | n | " + " | ".join(e.metrics) + " |",
                      "|---|---:|" + "---:|" * len(e.metrics)]
            for name, stratum in sorted(e.strata[arm].items()):
                cis = " | ".join(ci_text(stratum.scores[m]) for m in e.metrics)
                lines.append(f"| {name or '—'} | {stratum.n} | {cis} |")
        lines.append("")
    return lines


def _method_rows(methods: dict[str, dict[str, Scored]], names: tuple[str, ...], headline: str) -> list[str]:
    return [f"| {m}{' (headline)' if m == headline else ''} | " + " | ".join(ci_text(s[n]) for n in names) + " |"
            for m, s in sorted(methods.items())]


def methods_md(entries: tuple[BenchmarkEntry, ...], pools: tuple[PooledBenchmark, ...],
                arms: tuple[str, ...]) -> list[str]:
    """Every method of each public benchmark's system, under its first arm (the baseline when
    it ran): pooled over a benchmark's splits, then per dataset and per stratum; every arm's
    are in the JSON."""
    if not any(e.methods for e in entries):
        return []
    lines = ["", "## Public benchmarks: every method", "",
             "Each method of the system, the headline's too, on the benchmark's metrics and the MRR (95 % bootstrap "
             "intervals, 1000 resamples, seed 0), under the first arm of the columns that ran it; every arm's are in "
             "phase-matrix.json (`benchmarks[].methods`, `pooled_benchmarks[].methods`).", ""]
    for p in (p for p in pools if p.methods):
        arm = next(a for a in arms if a in p.methods)
        lines += [f"**{p.benchmark} · {p.system}** ({p.format}, {arm}), pooled over {', '.join(p.datasets)}", "",
                  "| method | " + " | ".join(p.method_metrics) + " |", "|---|" + "---:|" * len(p.method_metrics),
                  *_method_rows(p.methods[arm], p.method_metrics, p.method), ""]
    for e in (e for e in entries if e.methods):
        arm, names = next(a for a in arms if a in e.methods), e.method_metrics
        lines += [f"**{e.dataset} · {e.system}** ({e.format}, {arm})", "", "| method | " + " | ".join(names) + " |",
                  "|---|" + "---:|" * len(names), *_method_rows(
                      {m: b.scores for m, b in e.methods[arm].items()}, names, e.method)]
        strata = sorted({k for b in e.methods[arm].values() for k in b.strata or {}})
        if strata:
            lines += ["", "By stratum:", "", "| stratum | method | n | " + " | ".join(names) + " |",
                      "|---|---|---:|" + "---:|" * len(names)]
            for k in strata:
                lines += [f"| {k or '—'} | {m} | {b.strata[k].n} | " +
                          " | ".join(ci_text(b.strata[k].scores[n]) for n in names) + " |"
                          for m, b in sorted(e.methods[arm].items()) if b.strata and k in b.strata]
        lines.append("")
    return lines
