"""Search latency per system, method and arm; and quality against latency."""

from __future__ import annotations

import altair as alt
import pandas as pd

from crmatrix.plots import frames
from crmatrix.plots.sources import View
from crmatrix.plots.style import categorical, title
from crmatrix.results.times import RunTimes


def draw(runs: list[RunTimes], view: View, models: dict[str, dict[str, str]]) -> dict[str, alt.TopLevelMixin]:
    """`latency` and `quality-latency` from every run's times and the matrix's statistics (the
    headline metric and method); `models`: system -> arm -> the config's name of its model.
    Refuses runs of one dataset made from other inputs (`frames.check_comparable`)."""
    frames.check_comparable(runs)
    datasets = len({r.dataset for r in view.rows})
    headline = view.rows[0].method if view.rows else ""
    return {"latency": chart(frames.latency(runs), arms=view.arms, datasets=datasets),
            "quality-latency": quality_chart(frames.quality(runs, view.metric, models), metric=view.metric,
                                             datasets=datasets, headline=headline)}


def chart(df: pd.DataFrame, *, arms: list[str], datasets: int) -> alt.FacetChart:
    methods = sorted(df["method"].unique())
    x = alt.X("p50_ms:Q", scale=alt.Scale(type="log"), title="search latency, ms (p50, whisker to p95)")
    base = alt.Chart().encode(y=alt.Y("arm:N", sort=arms, title="arm"), yOffset=alt.YOffset("method:N", sort=methods),
                              color=alt.Color("method:N", scale=categorical(methods),
                                              legend=alt.Legend(title="method")))
    whiskers = base.mark_rule(strokeWidth=1.5).encode(x=x, x2=alt.X2("p95_ms:Q"))
    points = base.mark_point(filled=True, size=45).encode(
        x=x, tooltip=[alt.Tooltip("system:N"), alt.Tooltip("method:N"), alt.Tooltip("arm:N"),
                      alt.Tooltip("p50_ms:Q", format=".2f"), alt.Tooltip("p95_ms:Q", format=".2f"),
                      alt.Tooltip("queries:Q")])
    return alt.layer(whiskers, points, data=df).properties(width=380, height=alt.Step(11)).facet(
        row=alt.Row("system:N", title=None, header=alt.Header(labelAngle=0, labelAlign="left", labelFontWeight="bold")),
        title=title(f"Search latency per system, method and arm ({datasets} datasets, "
                    f"{int(df['queries'].max()) if len(df) else 0} queries per cell)",
                    "point: p50; whisker: p95; timed around the search call only"))


def quality_chart(df: pd.DataFrame, *, metric: str, datasets: int, headline: str) -> alt.LayerChart:
    methods = sorted(df["method"].unique())
    base = alt.Chart(df).encode(
        x=alt.X("p50_ms:Q", scale=alt.Scale(type="log"), title="search latency p50, ms"),
        y=alt.Y("value:Q", title=f"{metric} (macro mean over {datasets} datasets)", scale=alt.Scale(zero=False)))
    points = base.mark_point(filled=True, size=70).encode(
        color=alt.Color("method:N", scale=categorical(methods), legend=alt.Legend(title="method")),
        shape=alt.Shape("system:N", legend=alt.Legend(title="system")),
        tooltip=[alt.Tooltip("system:N"), alt.Tooltip("method:N"), alt.Tooltip("arm:N"), alt.Tooltip("model:N"),
                 alt.Tooltip("value:Q", format=".3f"), alt.Tooltip("p50_ms:Q", format=".2f"),
                 alt.Tooltip("datasets:Q")])
    labels = base.transform_filter(alt.datum.method == headline).mark_text(
        align="left", dx=6, fontSize=9, color="#333").encode(text=alt.Text("arm:N"))
    return alt.layer(points, labels).properties(
        width=420, height=300,
        title=title(f"{metric} against search latency ({datasets} datasets)",
                    f"one point per system · method · arm; labels: the arms of {headline}"))
