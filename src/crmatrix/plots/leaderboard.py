"""Systems × datasets: each system's headline metric per dataset with its interval, one panel
per system, the panels in order of the system's pooled Δ against the reference system, a Δ the
paired test cannot judge marked `not testable`."""

from __future__ import annotations

import altair as alt

from crmatrix.analysis.stats import MIN_QUERIES
from crmatrix.hits import FILE
from crmatrix.plots import frames
from crmatrix.plots.style import PALETTE, title
from crmatrix.results.versus import Compared


def draw(table: Compared) -> alt.FacetChart:
    """The chart of a comparison of systems (`crmatrix.analysis.versus.compare`)."""
    df, order = frames.leaderboard(table)
    judged = all(v.testable for v in table.versus if v.studies)
    untestable = [] if judged else [f"not testable: fewer than {MIN_QUERIES} queries both answered (no outcome of "
                                    "the paired test on fewer is significant), or no spread to test"]
    x_title, scale = f"{table.metric} (95 % bootstrap interval)", alt.Scale(domain=[0, 1])
    y = alt.Y("dataset:N", sort=list(table.datasets), title=None)
    base = alt.Chart().encode(y=y)
    whiskers = base.mark_rule(strokeWidth=1.5, color=PALETTE[0]).encode(
        x=alt.X("ci_low:Q", title=x_title, scale=scale), x2=alt.X2("ci_high:Q"))
    points = base.mark_point(filled=True, size=50, opacity=1, color=PALETTE[0]).encode(
        x=alt.X("value:Q", title=x_title, scale=scale),
        tooltip=[alt.Tooltip("system:N"), alt.Tooltip("dataset:N"), alt.Tooltip("method:N"),
                 alt.Tooltip("value:Q", format=".3f"), alt.Tooltip("ci_low:Q", format=".3f"),
                 alt.Tooltip("ci_high:Q", format=".3f"), alt.Tooltip("n:Q"), alt.Tooltip("failed:Q"),
                 alt.Tooltip("empty:Q"), alt.Tooltip("unresolved:Q")])
    return alt.layer(whiskers, points, data=df).properties(width=150, height=alt.Step(14)).facet(
        column=alt.Column("system:N", sort=order, title=None, header=alt.Header(labelFontWeight="bold")),
        title=title(f"Leaderboard: {table.metric} per system and dataset ({len(order)} systems, "
                    f"{len(table.datasets)} datasets)",
                    [f"left to right: pooled Δ {table.metric} against {table.reference} on the queries both "
                     "answered (random effects over datasets)",
                     "point: the mean over all queries, a failed, empty or unresolved one scoring 0; "
                     "whisker: its 95 % interval",
                     *_level(table), *untestable]))


def _level(table: Compared) -> list[str]:
    """The level every query is scored at, in words (none when the comparison does not say)."""
    if table.level is None:
        return []
    if table.level == FILE:
        return ["at file level, the finest every system answers: each query's hits ranked as files, each at its "
                "first hit"]
    return ["at symbol level: every system answers symbols (each query at its gold's level)"]
