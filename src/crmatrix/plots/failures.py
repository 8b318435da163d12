"""Failed queries per system, by kind (crash, timeout, bad-output, empty, budget)."""

from __future__ import annotations

import altair as alt

from crmatrix.plots import frames
from crmatrix.plots.style import categorical, title
from crmatrix.results.run import QueryRow

KINDS = ["crash", "timeout", "bad-output", "empty", "budget", "none"]


def draw(by: dict[str, list[QueryRow]], order: list[str]) -> alt.LayerChart:
    """From each system's query rows (`crmatrix.analysis.versus.rows_by_system`); `order`: the
    systems from top to bottom."""
    df = frames.failures(by)
    y = alt.Y("system:N", sort=order, title=None)
    bars = alt.Chart(df).mark_bar().encode(
        y=y, x=alt.X("sum(failed):Q", title="failed queries (counted as misses)"),
        color=alt.Color("kind:N", scale=categorical(KINDS), legend=alt.Legend(title="kind")),
        tooltip=[alt.Tooltip("system:N"), alt.Tooltip("kind:N"), alt.Tooltip("failed:Q"), alt.Tooltip("queries:Q")])
    totals = df.groupby("system", as_index=False).agg(failed=("failed", "sum"), label=("label", "first"))
    labels = alt.Chart(totals).mark_text(align="left", dx=4, fontSize=10, color="#333").encode(
        y=y, x=alt.X("failed:Q"), text=alt.Text("label:N"))
    return alt.layer(bars, labels).properties(width=360, height=alt.Step(18), title=title(
        "Failed queries per system, by kind",
        "over the headline method's queries on every dataset; a failed query scores as a miss"))
