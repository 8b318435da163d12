"""What a system costs per query, beside grep-and-read: search latency p50/p95, and the tokens an
agent reads from the system's answer and from grep-and-read over the same queries."""

from __future__ import annotations

import altair as alt
import pandas as pd

from crmatrix.plots import frames
from crmatrix.plots.style import PALETTE, categorical, title
from crmatrix.results.run import QueryRow

READERS = ["system", "grep-and-read"]


def draw(by: dict[str, list[QueryRow]], order: list[str]) -> alt.HConcatChart:
    """From each system's query rows (`crmatrix.analysis.versus.rows_by_system`); `order`: the
    systems from top to bottom (the leaderboard's)."""
    df = frames.costs(by)
    y = alt.Y("system:N", sort=order, title=None)
    x = alt.X("p50_ms:Q", scale=alt.Scale(type="log"), title="search latency, ms (p50, whisker to p95)")
    lat = alt.Chart(df).encode(y=y)
    latency = alt.layer(
        lat.mark_rule(strokeWidth=1.5, color=PALETTE[0]).encode(x=x, x2=alt.X2("p95_ms:Q")),
        lat.mark_point(filled=True, size=50, opacity=1, color=PALETTE[0]).encode(
            x=x, tooltip=[alt.Tooltip("system:N"), alt.Tooltip("p50_ms:Q", format=".1f"),
                          alt.Tooltip("p95_ms:Q", format=".1f"), alt.Tooltip("queries:Q")])
    ).properties(width=300, height=alt.Step(18))
    tokens = pd.DataFrame([{"system": r.system, "reader": reader, "tokens": value}
                           for r in df.itertuples() for reader, value in
                           (("system", r.system_tokens), ("grep-and-read", r.grep_tokens)) if value is not None],
                          columns=["system", "reader", "tokens"])
    bars = alt.Chart(tokens).mark_bar().encode(
        y=y, yOffset=alt.YOffset("reader:N", sort=READERS), x=alt.X("tokens:Q", title="tokens read per query (mean)"),
        color=alt.Color("reader:N", scale=categorical(READERS), legend=alt.Legend(title=None)),
        tooltip=[alt.Tooltip("system:N"), alt.Tooltip("reader:N"), alt.Tooltip("tokens:Q", format=".0f")]).properties(
        width=300, height=alt.Step(9))
    queries = int(df["queries"].max()) if len(df) else 0
    return alt.hconcat(latency, bars).properties(title=title(
        f"Cost per query: latency and tokens read, per system (up to {queries} queries each)",
        ["latency timed around the search call only (grep-and-read is not timed); tokens: cl100k of the answer's "
         "first hits, against grep-and-read's 3 files × 200 lines for the same queries"]))
