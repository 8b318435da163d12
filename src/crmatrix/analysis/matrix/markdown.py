"""The phase matrix as Markdown: the table of rows and cells, the leaderboard of systems, the
roll-ups, each arm across datasets, pooled and ranked (`panels`), what the matrix can
tell, the gate, the public benchmarks (`benchmarks`), the test-split ledger, which queries moved, and the
token efficiency.

Arms go in the matrix's column order and a dict's other keys sorted, never in the order a
dict happens to hold them: the matrix read back from its JSON (keys sorted) gives the same
Markdown as the matrix just assembled."""

from __future__ import annotations

from crmatrix.analysis.matrix.benchmarks import benchmarks_md as _benchmarks_md
from crmatrix.analysis.matrix.benchmarks import ci_text
from crmatrix.analysis.matrix.benchmarks import methods_md as _methods_md
from crmatrix.analysis.matrix.panels import (
    arm_ranks_md,
    beaten_md,
    group_mde_text,
    labelled,
    leaderboard_md,
    one_arm,
    one_arm_text,
    untestable_text,
)
from crmatrix.analysis.matrix.panels import p_text as _p
from crmatrix.analysis.matrix.rows import significant
from crmatrix.analysis.stats import HYBRID_CATEGORIES
from crmatrix.results.cell import GATE_METRIC
from crmatrix.results.matrix import LedgerEntry, PhaseMatrix, Rollup
from crmatrix.results.pool import Judged, PoolEntry, PoolGroup, PowerGroup
from crmatrix.results.row import Detectable, MatrixCell, Row
from crmatrix.results.run import TokenEfficiency


def _p_text(cell: MatrixCell) -> str:
    """The corrected p beside the unadjusted one; an arm outside the family shows the latter only."""
    raw = _p(cell.compared.p_randomization)
    if cell.corrected.p_holm is None:
        return f"p={raw} unadjusted (not in the family)"
    return f"p={_p(cell.corrected.p_holm)} ({raw} unadj.)"


def _cell_text(cell: MatrixCell | None, minimum: int) -> str:
    if cell is None:
        return "—"
    text = f"{cell.mean:.3f} [{cell.ci_low:.2f}, {cell.ci_high:.2f}]"
    if cell.identical_to:
        text += f"<br>≡ {cell.identical_to}"
    elif cell.compared is not None:
        c = cell.compared
        rel = "" if c.delta_rel is None else f" {c.delta_rel:+.1%}"
        sig = "*" if significant(cell.corrected.p_holm) else ""
        text += f"<br>Δ {c.delta_abs:+.3f}{rel} {c.band}{sig}"
        if not cell.corrected.testable:
            text += f"<br>{untestable_text(cell.n, minimum)}"
        elif not c.moved:
            text += "<br>no query moved"
        else:
            text += f"<br>{_p_text(cell)} ↑{c.improved} ↓{c.regressed}"
            if not sig and cell.corrected.queries_needed:
                text += f"<br>needs ≈{cell.corrected.queries_needed} queries"
    if cell.response == "blob":
        text += "<br>blob: rank-1 only"
    flags = ["clamped"] if cell.clamped else []
    if cell.failed:
        kinds = ", ".join(f"{n} {k}" for k, n in sorted(cell.failures.items()))
        flags.append(f"{cell.failed} failed ({kinds})")
    if cell.no_hit:
        flags.append(f"{cell.no_hit} answers resolved no hit")
    return text + (f"<br>⚠ {', '.join(flags)}" if flags else "")


def _untestable_legend(matrix: PhaseMatrix) -> str:
    """The legend of `not testable`, where a cell of the matrix is."""
    if all(c.corrected is None or c.corrected.testable for r in matrix.rows for c in r.cells.values()):
        return ""
    return (f" `not testable`: fewer queries than the paired test needs ({matrix.statistics.min_queries}; on fewer "
            "no outcome is significant), so no p: neither tied nor told apart.")


def _detectable_text(d: Detectable) -> str:
    if d.abs is None:
        return "—"
    return f"±{d.abs:.3f}" + ("" if d.rel is None else f" ({d.rel:.0%})")


def _p_or_none(p: float | None) -> str:
    return "—" if p is None else _p(p)


def _pool_text(g: PoolGroup) -> str:
    """A pooled group in words: estimate and interval, I², datasets pooled, and the verdicts."""
    v, p = g.verdict, g.pooled
    tally = f"{v.positive} positive / {v.negative} negative / {v.inert} inert"
    if p is None:
        return f"no variation to pool ({tally})"
    i2 = "" if p.i2 is None else f", I² {p.i2:.0%}"
    return f"{p.estimate:+.3f} [{p.ci_low:+.3f}, {p.ci_high:+.3f}] (k {p.k}{i2}; {tally})"


def _pooled_md(pooled: tuple[PoolEntry, ...]) -> list[str]:
    if not pooled:
        return []
    lines = ["", "## One knob pooled across datasets (random effects)", "",
             "Each dataset's paired Δ weighs by 1 / (its variance + τ²), τ² by DerSimonian–Laird; the interval is "
             "95 % normal; I² is the share of the spread between datasets beyond chance. Verdicts: the sign of a "
             "Δ outside the flat band, else inert. A dataset whose Δ did not vary over queries is counted, not pooled.",
             "", "| system | arm | all datasets | by language | structural splits |", "|---|---|---|---|---|"]
    for e in pooled:
        by = {g.kind: g for g in e.groups}
        langs = "; ".join(f"{g.group} {_pool_text(g)}" for g in e.groups if g.kind == "language")
        cols = [_pool_text(by["overall"]) if "overall" in by else "—", langs or "—",
                _pool_text(by["split"]) if "split" in by else "—"]
        lines.append(f"| {e.system} | {e.arm} | " + " | ".join(cols) + " |")
    return lines


def _arm_power(j: Judged, queries: int) -> str:
    """An arm's own MDE and the share of the group's queries it moved."""
    return f"MDE ±{j.mde:.3f}, moved {j.moved / queries:.0%}" if queries else f"MDE ±{j.mde:.3f}"


def _decided(g: PowerGroup, arms: tuple[str, ...]) -> tuple[str, str]:
    """A group's arms whose pooled interval decides, with it, and the ones it leaves undecided,
    each with its own MDE and the share of the group's queries it moved."""
    judged = [(a, g.arms[a]) for a in arms if a in g.arms]
    decided = "; ".join(f"{a} {j.verdict} {j.delta:+.3f} [{j.ci[0]:+.3f}, {j.ci[1]:+.3f}] ({_arm_power(j, g.queries)})"
                        for a, j in judged if j.verdict != "undecided")
    undecided = "; ".join(f"{a} ({_arm_power(j, g.queries)})" for a, j in judged if j.verdict == "undecided")
    return decided or "—", undecided or "—"


def _power_md(matrix: PhaseMatrix) -> list[str]:
    power, arms = matrix.power, matrix.arms
    if not power.groups:
        return []
    if one_arm(matrix):
        return ["", "## What this matrix can tell", "", one_arm_text(matrix.baseline_arm)]
    share = f"{power.moved_share * 100:.0f} %"
    lines = ["", "## What this matrix can tell", "",
             f"Per row, its n and MDE are in the first table. Per pooled group of a system's datasets (a language, a "
             f"public benchmark with two datasets or more, all of them): its datasets and queries, its MDE, and each "
             f"arm with its own MDE (the smallest pooled |Δ| found with {power.target_power * 100:.0f} % power at "
             f"α = {power.alpha}: (z(1 − α/2) + z(power)) × the pool's standard error) and the share of the group's "
             f"queries it moved. The group's MDE is the median of the MDEs of the arms that moved at least {share} of "
             "its queries (an arm moving a handful has a tiny standard error and would flatter it; — when none "
             "did). An arm's pooled 95 % interval decides: positive or negative when it lies wholly beyond the flat "
             "band (|Δ| < 1 % of the baseline, averaged over the pooled datasets with the pool's weights), flat when "
             "it lies within it. An interval across an edge of the band decides nothing: more queries or datasets "
             "would. An arm that moved no query on any dataset of the group has nothing to pool and is not listed.",
             "", "| system | group | kind | datasets | queries | MDE | decided | undecided |",
             "|---|---|---|---:|---:|---:|---|---|"]
    for g in power.groups:
        decided, undecided = _decided(g, arms)
        lines.append(f"| {g.system} | {g.group} | {g.kind} | {g.datasets} | {g.queries} | "
                     f"{group_mde_text(g, power.moved_share)} | {decided} | {undecided} |")
    return lines


def _datasets(n: int) -> str:
    return f"{n} dataset" + ("" if n == 1 else "s")


def _rollup_md(title: str, key: str, entries: tuple[Rollup, ...], arms: tuple[str, ...]) -> list[str]:
    lines = [f"## {title}", "", f"| {key} | system | datasets | " + " | ".join(arms) + " |",
             "|---|---|---|" + "---:|" * len(arms)]
    for e in entries:
        cells = []
        for a in arms:
            c = e.arms.get(a)
            if c is None:
                cells.append("—")
            elif c.delta is not None:
                cells.append(f"{c.mean:.3f} (Δ {c.delta.mean_delta_abs:+.3f}; {_datasets(c.delta.better)} better, "
                             f"{c.delta.worse} worse)")
            else:
                cells.append(f"{c.mean:.3f}")
        lines.append(f"| {e.group} | {e.system} | {', '.join(e.datasets)} | " + " | ".join(cells) + " |")
    return lines + [""]


def to_markdown(matrix: PhaseMatrix) -> str:
    matrix = labelled(matrix)
    arms, base = matrix.arms, matrix.baseline_arm
    lines = [
        f"# Phase matrix — {matrix.metric} per dataset and arm",
        "",
        f"Each cell: {matrix.metric} of the row's headline method with its 95 % bootstrap interval "
        f"(1000 resamples of the queries, seed 0); against `{base}`: Δ (absolute, relative), effect band "
        "(flat < 1 %, strong ≥ 5 %; `*` when significant), the paired randomization p-value after Holm "
        "correction across the row's family, then unadjusted, and how many of the row's queries improved (↑) or "
        f"regressed (↓); a change not significant says how many queries would detect it.{_untestable_legend(matrix)} "
        "`≡ arm`: the same "
        "per-query results as that arm, so one hypothesis with it (none if it is the baseline); an arm that "
        "moved no query is no hypothesis either. "
        "MDE: the smallest |Δ| the row's n and per-query spread detect with 80 % power at the family's level. "
        "`⚠ clamped`: a value of the arm was out of range and clamped (the notes are in phase-matrix.json); "
        "`⚠ n failed`: n queries raised in the system and count as misses; `⚠ n answers resolved no hit`: at "
        "least half the answers named nothing (`empty`) or nothing of the corpus (`unresolved`); the run's "
        "warning names the cause; "
        "`—`: the system does not take "
        "part in the arm (its `arms:`).",
        "",
        "| dataset | system | method | language | n | MDE | " + " | ".join(arms) + " |",
        "|---|---|---|---|---:|---:|" + "---:|" * len(arms),
    ]
    for r in matrix.rows:
        cells = " | ".join(_cell_text(r.cells.get(a), matrix.statistics.min_queries) for a in arms)
        lines.append(f"| {r.dataset} | {r.system} | {r.method} | {r.language or '?'} | {r.n} | "
                     f"{_detectable_text(r.detectable)} | {cells} |")
    lines += ["", one_arm_text(base)] if one_arm(matrix) else []
    lines += beaten_md(matrix)
    lines.append("")
    lines += _file_level_md(matrix)
    lines += leaderboard_md(matrix)
    lines += _rollup_md("By language (macro average over datasets)", "language", matrix.by_language, arms)
    lines += _rollup_md("By archetype (macro average over datasets)", "archetype", matrix.by_archetype, arms)
    lines += ["## One knob across all datasets", ""]
    if one_arm(matrix):
        lines.append(f"No arm beside `{base}`.")
    else:
        lines += ["| arm | datasets better | datasets worse | significant | per dataset (Δ, band, corrected p) |",
                  "|---|---:|---:|---:|---|"]
    for k in matrix.knobs:
        per = "; ".join(f"{d.dataset} " + (f"≡ {d.identical_to}" if d.identical_to else
                                           f"{d.delta_abs:+.3f} {d.band} p={_p_or_none(d.p_holm)}")
                        for d in k.datasets)
        lines.append(f"| {k.arm} | {k.better} | {k.worse} | {k.significant} | {per} |")
    lines += _pooled_md(matrix.pooled)
    lines += arm_ranks_md(matrix)
    lines += _power_md(matrix)
    if matrix.gates:
        lines += ["", f"## Do-no-harm gate: {GATE_METRIC} on structural splits must not drop", "",
                  f"| dataset | system | {base} | " + " | ".join(a for a in arms if a != base) + " |",
                  "|---|---|---:|" + "---:|" * (len(arms) - 1)]
        for g in matrix.gates:
            cells = [("—" if (c := g.arms.get(a)) is None else f"{c.value:.3f} {'pass' if c.passed else 'FAIL'}")
                     for a in arms if a != base]
            lines.append(f"| {g.dataset} | {g.system} | {g.baseline:.3f} | " + " | ".join(cells) + " |")
    lines += _benchmarks_md(matrix.benchmarks, matrix.pooled_benchmarks, arms)
    lines += _methods_md(matrix.benchmarks, matrix.pooled_benchmarks, arms)
    lines += _ledger_md(matrix.test_ledger)
    lines += ["", "## Per-query decomposition against the baseline", ""]
    for r in matrix.rows:
        lines += _decomposition_md(r, arms, base)
    with_tokens = [r for r in matrix.rows if r.token_efficiency]
    if with_tokens:
        grep = with_tokens[0].token_efficiency.baseline
        lines += ["", f"## Token efficiency against grep-and-read ({base}, headline method)", "",
                  "Tokens an agent reads per query: the system's first hits against reading the top "
                  f"{grep.read_files} files matched by the query's words ({grep.read_lines} lines each); "
                  "a hit is the gold among what was read. Compare savings where both hit.", ""]
        for r in with_tokens:
            lines += [f"**{r.dataset} · {r.system}** ({r.method})", "", *token_table(r.token_efficiency), ""]
    return "\n".join(lines) + "\n"


def _file_level_md(matrix: PhaseMatrix) -> list[str]:
    """The rows whose gold is finer than files, their cells at file level (none without one)."""
    rows = [r for r in matrix.rows if any(c.file_level for c in r.cells.values())]
    if not rows:
        return []
    arms = matrix.arms
    lines = ["## File level: each cell's hits ranked as files", "",
             f"The rows whose gold is finer than files: {matrix.metric} with each query's hits ranked as files (each "
             "file at its first hit) against its gold's files (a symbol's file is its path), with its 95 % bootstrap "
             "interval; what a system answering files is ranked by.", "",
             "| dataset | system | method | " + " | ".join(arms) + " |", "|---|---|---|" + "---:|" * len(arms)]
    for r in rows:
        cells = [(c := r.cells.get(a)) and c.file_level for a in arms]
        lines.append(f"| {r.dataset} | {r.system} | {r.method} | "
                     + " | ".join("—" if x is None else ci_text(x) for x in cells) + " |")
    return lines + [""]


def _ledger_md(entries: tuple[LedgerEntry, ...]) -> list[str]:
    if not entries:
        return []
    return ["", "## Test-split ledger", "",
            "How often each config (dataset file, split, system settings, arm variables, model) was scored "
            "on a test split, these runs included (`baselines/test-ledger.json`). A test set is looked at "
            "once: iterate on small_dev; scoring a config on test again needs `--config force_test=true`.", "",
            "| dataset | split | system | arm | config | times scored | on |", "|---|---|---|---|---|---:|---|",
            *(f"| {e.dataset} | {e.split} | {e.system} | {e.arm} | `{e.config}` | {e.count} | {', '.join(e.dates)} |"
              for e in entries)]


def _decomposition_md(r: Row, arms: tuple[str, ...], base: str) -> list[str]:
    """A row's queries that moved under each arm, and its hybrid diagnostics (the baseline's,
    else its first arm's), in the categories' order."""
    lines = []
    for arm in (a for a in arms if a in r.decomposition):
        moved = r.decomposition[arm].improved + r.decomposition[arm].regressed
        if moved:
            lines.append(f"- **{r.dataset} · {arm}** ({r.method}): " + ", ".join(
                f"{q.task_id} {q.transition}" for q in sorted(moved, key=lambda q: q.task_id)))
    diagnosed = [a for a in arms if r.hybrid_diagnostics.get(a)]
    if diagnosed:
        diag = r.hybrid_diagnostics[base if base in diagnosed else diagnosed[0]]
        lines.append(f"- {r.dataset} hybrid diagnostics ({base}): " +
                     ", ".join(f"{k.replace('_', ' ')} {diag[k]}" for k in HYBRID_CATEGORIES))
    return lines


def token_table(eff: TokenEfficiency) -> list[str]:
    """The per-query-type table, as Markdown lines; queries whose failed or empty answers it
    leaves out of the tokens and savings are counted beside `n`, and said below it."""
    def pct(x):
        return "—" if x is None else f"{x:.0%}"

    lines = ["| query type | n | grep-and-read tokens | system tokens | saving | grep hit | system hit "
             "| both hit | saving when both hit |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for qt, e in [*eff.by_query_type.items(), ("all", eff.all)]:
        n = f"{e.n} ({e.excluded} excluded)" if e.excluded else f"{e.n}"
        lines.append(f"| {qt} | {n} | {e.grep_tokens:.0f} | {e.system_tokens:.0f} | {pct(e.saving)} | "
                     f"{e.grep_hit_rate:.0%} | {e.system_hit_rate:.0%} | {e.both_hit} | {pct(e.saving_both_hit)} |")
    if eff.all.excluded:
        lines += ["", f"Excluded: {eff.all.excluded} of {eff.all.n} queries failed or answered no hit (`empty`); "
                      "the tokens and savings are over the others (an empty answer saves nothing), the hit rates "
                      "over all."]
    return lines
