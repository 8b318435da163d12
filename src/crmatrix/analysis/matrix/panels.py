"""The parts of the phase matrix's Markdown the gallery shows too (`crmatrix.stages.plot_gallery`):
the leaderboard of its systems with its caption, the arms ranked across datasets, the rows
whose headline method another method of their system beats (under the first table and in the
leaderboard's caption), a group's MDE in words, and what a matrix of one arm lacks.

Types and words only, no statistics: the gallery's job runs this module, and an edit of the
statistics must not redraw it."""

from __future__ import annotations

from crmatrix.hits import FILE
from crmatrix.labels import dataset_label
from crmatrix.results.leaderboard import Board, Leaderboard, Separation, Standing
from crmatrix.results.matrix import PhaseMatrix
from crmatrix.results.pool import PowerGroup
from crmatrix.results.row import Row

GUIDE = "choose the headline with `headline_method`, the reference with `reference_system` (docs/matrix.md)"


def _labelled(obj, notes: dict[str, str]):
    """The matrix with each dataset named by its label (`dataset`, `datasets`, `unvaried` keys)."""
    if isinstance(obj, list):
        return [_labelled(x, notes) for x in obj]
    if not isinstance(obj, dict):
        return obj
    out = {}
    for k, v in obj.items():
        if k == "dataset" and isinstance(v, str):
            out[k] = dataset_label(v, notes.get(v))
        elif k in ("datasets", "unvaried") and isinstance(v, list) and all(isinstance(x, str) for x in v):
            out[k] = [dataset_label(x, notes.get(x)) for x in v]
        else:
            out[k] = _labelled(v, notes)
    return out


def labelled(matrix: PhaseMatrix) -> PhaseMatrix:
    """The matrix with every dataset named by its label (put in its JSON, read back as the matrix)."""
    if not matrix.notes:
        return matrix
    return PhaseMatrix.from_json(_labelled(matrix.to_json(), matrix.notes), "the phase matrix")


def p_text(p: float) -> str:
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def _interval(low: float, high: float) -> str:
    return f"[{low:+.3f}, {high:+.3f}]"


def untestable_text(queries: int, minimum: int) -> str:
    """Why a comparison on `queries` shared queries is not testable (`minimum`: the fewest the
    paired test can judge, the matrix's `statistics.min_queries`)."""
    if queries < minimum:
        shared = "no shared query" if queries == 0 else f"{queries} shared quer{'y' if queries == 1 else 'ies'}"
        return f"not testable: {shared}, the test needs ≥ {minimum}"
    return "not testable: no dataset's differences vary over its queries, no spread to test"


def separation_text(s: Separation, minimum: int) -> str:
    """An adjacent pair in words: its mark and the lower one, the paired pooled Δ upper − lower and its p."""
    if s.mark == "not testable":
        return f"{untestable_text(s.queries, minimum)}, with {s.lower}: {s.delta:+.3f}"
    head = f"{s.mark} {'from' if s.mark == 'separated' else 'with'} {s.lower}"
    if s.p is None:
        return f"{head}: {s.delta:+.3f}, no per-query spread to test"
    return f"{head}: {s.delta:+.3f} {_interval(*s.ci)}, p={p_text(s.p_holm)} ({p_text(s.p)} unadj.)"


def _beaten(rows: tuple[Row, ...]) -> list[tuple[Row, str]]:
    """(row, "bm25 0.563 (Δ +0.105, p=0.004)") for each method beating a row's headline, by name."""
    return [(r, f"{m} {c.mean:.3f} (Δ {c.delta_abs:+.3f}, p={p_text(c.p_holm)})")
            for r in rows for m, c in sorted(r.beaten_by.items())]


def beaten_md(matrix: PhaseMatrix) -> list[str]:
    """The note under the first table: each row whose headline another method beats beyond noise."""
    beaten = _beaten(matrix.rows)
    if not beaten:
        return []
    base = matrix.baseline_arm
    per = "; ".join(f"{r.dataset} · {r.system}: {r.method} {r.cells[base].mean:.3f} < {text}" for r, text in beaten)
    return ["", f"⚠ A headline method beaten beyond noise by another method of its system (the `{base}` arm; paired "
                f"randomization test on the row's queries, Holm across the system's other methods): {per}. Every Δ "
                f"of such a row is against the weaker method: {GUIDE}."]


def _caption_beaten(matrix: PhaseMatrix) -> list[str]:
    """Per system whose headline is beaten somewhere, one line of the leaderboard's caption."""
    out = []
    for system in sorted({r.system for r in matrix.rows}):
        rows = [r for r in matrix.rows if r.system == system]
        beaten = _beaten(tuple(rows))
        if beaten:
            methods = sorted({r.method for r, _ in beaten})
            out += ["", f"⚠ {system}'s headline {', '.join(methods)} is beaten beyond noise by another of its "
                        f"methods on {len({r.dataset for r, _ in beaten})} of its {len(rows)} datasets ("
                        + "; ".join(f"{r.dataset}: {text}" for r, text in beaten)
                        + f"): its standing is the weaker method's; {GUIDE}."]
    return out


def _delta_text(s: Standing, reference: str, minimum: int) -> str:
    if s.system == reference:
        return "reference"
    if not s.paired:
        return "no query both answered"
    if not s.testable:
        return f"{s.delta:+.3f} ({untestable_text(s.paired, minimum)})"
    if s.pooled is None:
        return f"{s.delta:+.3f} (no dataset varied)"
    return f"{s.delta:+.3f} {_interval(s.pooled.ci_low, s.pooled.ci_high)}"


def _failed_text(s: Standing) -> str:
    kinds = ", ".join(f"{n} {k}" for k, n in s.failures.items())
    return f"{s.failed} ({kinds})" if s.failed else "0"


def leaderboard_md(matrix: PhaseMatrix) -> list[str]:
    """The leaderboard section (none for a matrix of one system), ending with a blank line."""
    board: Leaderboard | None = matrix.leaderboard
    if board is None:
        return []
    ref, metric, minimum = board.reference, matrix.metric, matrix.statistics.min_queries
    lines = ["## Leaderboard: systems compared", "",
             f"Each system as it ships (the `{matrix.baseline_arm}` arm, its headline method) against the reference "
             f"`{ref}`: its datasets and queries; its macro mean {metric} over its datasets (a failed query scores "
             "0); its pooled Δ against the reference with the 95 % interval and I² (random effects over the datasets "
             "both ran, each paired on the queries both answered: `paired`); its failed queries, and beside them "
             "its answers that named nothing (`empty`) or nothing of the corpus (`unresolved`), each scoring 0; its "
             "search latency p50/p95 over all its queries (the runs' timings: the one part of the matrix a re-run "
             "changes). Rank: "
             "each adjacent pair's paired pooled Δ (upper − lower, on the queries both answered over the datasets "
             f"both ran), Holm-corrected over the pairs, is `separated` below α = {matrix.statistics.alpha}, else "
             f"`tied`; `not testable` with fewer than {minimum} queries both answered (no outcome of the paired test "
             "on fewer is significant) or no spread to test; neighbours not separated share a rank.",
             *_caption_beaten(matrix), *_level_text(board), "", *_board_md(board, metric, minimum)]
    if board.symbol_level is not None:
        lines += ["", "### Symbol level: the systems answering symbols", "",
                  "The same, of the systems whose hits name symbols alone, each query scored at its gold's level "
                  "(symbols; files for a gold of files).", "", *_board_md(board.symbol_level, metric, minimum)]
    return lines + [""]


def _level_text(board: Leaderboard) -> list[str]:
    """The level the board ranks at, in words (none for a matrix from before levels were told apart)."""
    if board.level is None:
        return []
    if board.level == FILE:
        answer = ", ".join(board.file_systems)
        return ["", f"Ranked at **file level**, the finest every system answers ({answer}: files): "
                    "each query scored with the hits ranked as files, each file at its first hit, against its gold's "
                    "files (a symbol's file is its path)."]
    return ["", "Ranked at **symbol level**: every system answers symbols; each query scored at its gold's level."]


def _board_md(board: Board, metric: str, minimum: int) -> list[str]:
    """A board's standings, then the separation of its adjacent pairs."""
    ref = board.reference
    lines = [f"| rank | system | method | datasets | queries | {metric} (macro) | Δ against {ref} [95 % CI] | I² | "
             "paired | failed | empty | unresolved | p50 ms | p95 ms |",
             "|---:|---|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|"]
    for s in board.standings:
        i2 = "—" if s.pooled is None or s.pooled.i2 is None else f"{s.pooled.i2:.0%}"
        lines.append(f"| {s.rank} | {s.system} | {s.method} | {s.datasets} | {s.queries} | {s.mean:.3f} | "
                     f"{_delta_text(s, ref, minimum)} | {i2} | {'—' if s.paired is None else s.paired} | "
                     f"{_failed_text(s)} | "
                     f"{s.empty} | {s.unresolved} | {s.latency_ms['p50']:.1f} | {s.latency_ms['p95']:.1f} |")
    if board.pairs:
        lines += ["", "| upper › lower | datasets | queries | Δ upper − lower [95 % CI] | p (Holm) | p | mark |",
                  "|---|---:|---:|---|---:|---:|---|"]
        for p in board.pairs:
            delta = f"{p.delta:+.3f}" + (f" {_interval(*p.ci)}" if p.ci else "")
            mark = untestable_text(p.queries, minimum) if p.mark == "not testable" else p.mark
            lines.append(f"| {p.upper} › {p.lower} | {p.datasets} | {p.queries} | {delta} | "
                         f"{'—' if p.p_holm is None else p_text(p.p_holm)} | {'—' if p.p is None else p_text(p.p)} | "
                         f"{mark} |")
    return lines


def arm_ranks_md(matrix: PhaseMatrix) -> list[str]:
    """Each system's arms ranked across its plain datasets (none without an arm to rank)."""
    if not matrix.arm_ranks:
        return []
    lines = ["", "## Arms ranked across all datasets", "",
             f"Per system, `{matrix.baseline_arm}` and each arm pooled over the system's plain datasets, in order of "
             "that pooled Δ (the `all datasets` pool above; `≡` arms tie); against the next: the adjacent pair's "
             "paired pooled Δ (upper − lower, on the queries both answered), Holm-corrected over the system's pairs, "
             f"`separated` below α = {matrix.statistics.alpha}, else `tied`, `not testable` with fewer than "
             f"{matrix.statistics.min_queries} queries both answered or no spread to test; neighbours not separated "
             "share a rank.", "",
             "| system | rank | arm | pooled Δ | against the next |", "|---|---:|---|---:|---|"]
    for ranking in matrix.arm_ranks:
        after = {p.upper: p for p in ranking.pairs}
        for a in ranking.arms:
            nxt = separation_text(after[a.arm], matrix.statistics.min_queries) if a.arm in after else "—"
            lines.append(f"| {ranking.system} | {a.rank} | {a.arm} | {a.delta:+.3f} | {nxt} |")
    return lines


def group_mde_text(g: PowerGroup, share: float) -> str:
    """A group's MDE in words: the median of its moving arms', or why it has none."""
    if g.mde is not None:
        return f"±{g.mde:.3f} ({len(g.mde_arms)} of {len(g.arms)} arms)"
    return f"— (no arm moved {share * 100:.0f} % of its queries)" if g.arms else "— (no arm moved a query)"


def one_arm(matrix: PhaseMatrix) -> bool:
    """Whether the matrix has the baseline arm alone: nothing is compared with it."""
    return matrix.arms == (matrix.baseline_arm,)


def one_arm_text(baseline: str) -> str:
    return (f"The matrix has one arm, `{baseline}`: no arm is compared with it, so there is no Δ, test, MDE or "
            "pooled verdict to show. Add an arm to compare (docs/arms.md).")
