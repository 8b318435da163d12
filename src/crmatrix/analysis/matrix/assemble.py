"""The phase matrix: every arm against the baseline, per dataset, with its uncertainty.

A row is one (dataset, system); a cell is one arm's mean of the headline metric with its
95 % bootstrap interval and, against the baseline, the paired bootstrap interval of Δ, a
paired randomization test (Holm-corrected across the row's family of hypotheses), exact
McNemar on per-query hits at 1, the effect band, and which queries moved. An arm whose
answers repeat another arm's is marked identical to it and is one hypothesis with it (none
when it repeats the baseline). Each row states the effect its queries can detect. Rows roll
up by language and archetype, each arm gets a "one knob across all datasets" line, and a
random-effects pool of its per-dataset deltas (`crmatrix.analysis.meta`).

A cell's statistics come from its run and the baseline's run alone (`crmatrix.analysis.cells`,
one job per cell in the workflow); `assemble` makes the matrix of them: `rows` (identity,
family, correction, detectable effect), `rollups`, `pooling`, `power` (what the matrix can
tell: detectable effects and pooled verdicts per group), `leaderboard` (the systems and each
system's arms ranked, neighbours told apart or tied), and `markdown` to write it.

(Here, not in the package's `__init__`: a chart drawn from cells imports `rows` and `pooling`
alone, so an edit of the Markdown writer redraws no forest.)
"""

from __future__ import annotations

from dataclasses import replace

from crmatrix import atomic
from crmatrix.analysis import cells as cellstats
from crmatrix.analysis import stats
from crmatrix.analysis.matrix import leaderboard, pooling, power, rollups, rows
from crmatrix.analysis.matrix.markdown import to_markdown
from crmatrix.results.cell import METRIC, Cell, FormatFacts
from crmatrix.results.matrix import LedgerEntry, PhaseMatrix, Statistics
from crmatrix.results.run import Run


def assemble(cells: list[Cell], baseline_arm: str, headline_method: str, arm_order: list[str] = (),
             archetypes: dict[str, str] | None = None, splits: dict[str, str] | None = None,
             comparisons: list[str] | None = None, test_ledger: list[dict] | None = None,
             summaries: dict[str, dict] | None = None, notes: dict[str, str] | None = None,
             reference: str | None = None, pooled_as: dict[str, str] | None = None) -> PhaseMatrix:
    """The matrix of these cells' statistics (`cells.cell`), in any order: rows come sorted by
    dataset and system, columns in `arm_order` (the config's order) with the baseline first, so
    the same cells give the same bytes. `headline_method`: the method the config prefers (each
    row states the one it has; the power block names this one). `reference`: the system the
    leaderboard compares the others with (config `reference_system`; None: no leaderboard).
    `comparisons`: the arms whose tests form each row's correction family (None: every arm).
    `test_ledger`: how often each test-split run's config was scored there (crmatrix.datasets.ledger).
    `summaries`: each dataset stage's summary of dropped rows. `notes`: a dataset's caveat (an
    oracle run's), kept on its row and shown beside its name wherever it appears. `pooled_as`:
    a dataset split from a benchmark (config.Dataset.pooled_as) -> that benchmark, whose
    metrics the matrix also gives over all its splits' queries."""
    present = {c.arm for c in cells}
    order = [a for a in arm_order if a in present] + sorted(present - set(arm_order))
    arms = sorted(order, key=lambda a: a != baseline_arm)
    table: dict[tuple, dict[str, Cell]] = {}
    for c in cells:
        table.setdefault((c.dataset, c.system), {})[c.arm] = c
    notes = {d: n for d, n in sorted((notes or {}).items()) if n}
    matrix_rows = [rows.row(d, s, docs, arms, baseline_arm, (archetypes or {}).get(d), (splits or {}).get(d),
                            comparisons)
                   for (d, s), docs in sorted(table.items())]
    matrix_rows = [replace(r, note=notes.get(r.dataset)) for r in matrix_rows]
    formats: dict[str, FormatFacts | None] = {d: next(iter(docs.values())).format for (d, _), docs in table.items()}
    pools = pooling.pooled(matrix_rows, arms, baseline_arm)
    return PhaseMatrix(
        metric=METRIC, baseline_arm=baseline_arm, arms=tuple(arms), rows=tuple(matrix_rows),
        by_language=tuple(rollups.rollup(matrix_rows, "language", arms, baseline_arm)),
        by_archetype=tuple(rollups.rollup(matrix_rows, "archetype", arms, baseline_arm)),
        knobs=tuple(rollups.knob_table(matrix_rows, arms, baseline_arm)),
        gates=tuple(rollups.gates(table, matrix_rows, splits or {}, arms, baseline_arm)),
        pooled=tuple(pools),
        power=power.block(matrix_rows, arms, baseline_arm, formats, headline_method),
        benchmarks=tuple(rollups.benchmarks(table, matrix_rows, arms, summaries or {})),
        test_ledger=tuple(LedgerEntry.from_json(e, "test ledger") for e in test_ledger or []),
        statistics=Statistics(
            bootstrap_resamples=1000, seed=0, level=0.95, alpha=stats.ALPHA, min_queries=stats.MIN_QUERIES,
            test="paired randomization (sign flip), Holm across the row's family: one hypothesis per distinct arm "
                 "that moved a query (identical arms are one), the arms of `comparisons` when set",
            comparisons=None if comparisons is None else tuple(comparisons),
            detectable_effect="(z(1 - alpha/2m) + z(0.8)) * sd_diff / sqrt(n), m the family's size",
            pooling="random effects, DerSimonian-Laird; Δ's variance sd_diff^2 / n",
            bands="flat < 1 %, mild, strong >= 5 % of the baseline"),
        notes=notes, leaderboard=leaderboard.leaderboard(table, baseline_arm, reference),
        arm_ranks=tuple(leaderboard.arm_rankings(table, matrix_rows, pools, arms, baseline_arm)),
        pooled_benchmarks=tuple(rollups.pooled_benchmarks(table, arms, pooled_as or {})))


def build(runs: list[Run], baseline_arm: str, preferred_method: str, arm_order: list[str] = (),
          archetypes: dict[str, str] | None = None, splits: dict[str, str] | None = None,
          comparisons: list[str] | None = None, test_ledger: list[dict] | None = None,
          formats: dict[str, dict] | None = None, summaries: dict[str, dict] | None = None,
          notes: dict[str, str] | None = None, reference: str | None = None,
          pooled_as: dict[str, str] | None = None) -> PhaseMatrix:
    """The matrix straight from runs, each cell's statistics computed in turn here (a
    notebook's way; the workflow computes each cell in a job of its own). `formats`: the facts
    of each dataset's format (crmatrix.config.plan.Plan.matrix_format); the rest as `assemble`'s."""
    facts = {d: FormatFacts.from_json(f, f"format of dataset {d}") for d, f in (formats or {}).items()}
    base = {(r.dataset, r.system): r for r in runs if r.arm == baseline_arm}
    cells = [cellstats.cell(r, None if r.arm == baseline_arm else base.get((r.dataset, r.system)),
                            preferred_method, facts.get(r.dataset)) for r in runs]
    return assemble(cells, baseline_arm, preferred_method, arm_order, archetypes, splits, comparisons, test_ledger,
                    summaries, notes, reference, pooled_as)


def write(matrix: PhaseMatrix, json_path, md_path) -> None:
    atomic.write_json(json_path, matrix.to_json())
    atomic.write_text(md_path, to_markdown(matrix))
