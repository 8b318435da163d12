"""Failed queries per system, by kind (crash, timeout, bad-output, empty, budget), and beside them
the answers that named nothing (`empty`) or nothing of the corpus (`unresolved`)."""

from __future__ import annotations

import altair as alt

from crmatrix.plots import frames
from crmatrix.plots.style import categorical, title
from crmatrix.results.run import QueryRow

# A failure's kind is drawn as "failed: KIND", so a blank answer (the failure `empty`) and an
# answer listing no hit (the outcome `empty`) are never one colour.
KINDS = ["failed: crash", "failed: timeout", "failed: bad-output", "failed: empty", "failed: budget", "empty",
         "unresolved", "none"]


def draw(by: dict[str, list[QueryRow]], order: list[str]) -> alt.LayerChart:
    """From each system's query rows (`crmatrix.analysis.versus.rows_by_system`); `order`: the
    systems from top to bottom."""
    df = frames.failures(by)
    df["shown"] = [f"failed: {k}" if o == "failed" else k for o, k in zip(df["outcome"], df["kind"], strict=True)]
    y = alt.Y("system:N", sort=order, title=None)
    bars = alt.Chart(df).mark_bar().encode(
        y=y, x=alt.X("sum(count):Q", title="queries failed or naming nothing of the corpus (scored as misses)"),
        color=alt.Color("shown:N", scale=categorical(KINDS), legend=alt.Legend(title="outcome")),
        tooltip=[alt.Tooltip("system:N"), alt.Tooltip("outcome:N"), alt.Tooltip("kind:N"), alt.Tooltip("count:Q"),
                 alt.Tooltip("queries:Q")])
    totals = df.groupby("system", as_index=False).agg(count=("count", "sum"), label=("label", "first"))
    labels = alt.Chart(totals).mark_text(align="left", dx=4, fontSize=10, color="#333").encode(
        y=y, x=alt.X("count:Q"), text=alt.Text("label:N"))
    return alt.layer(bars, labels).properties(width=360, height=alt.Step(18), title=title(
        "Failed and empty or unresolved answers per system",
        "over the headline method's queries on every dataset; each scores as a miss"))
