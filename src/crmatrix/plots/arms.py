"""Per dataset: the headline metric of every arm with its 95 % bootstrap interval."""

from __future__ import annotations

import altair as alt
import pandas as pd

from crmatrix.labels import dataset_label
from crmatrix.plots import frames, sources
from crmatrix.plots.style import categorical, title

SHORT_BAR = 0.35  # below it, a bar's ≡ label is written above its whisker


def draw(view: sources.View, *, system: str, dataset: str, models: dict[str, str]) -> alt.LayerChart:
    """The chart of `dataset` on `system` from the matrix's statistics (`crmatrix.plots.sources`);
    `models`: arm -> the config's name of the model the system embeds with under it."""
    r = sources.row(view, dataset, system)
    return chart(frames.arms(r, view.arms, models), dataset=dataset_label(dataset, view.notes.get(dataset)),
                 system=system, method=r.method, metric=view.metric, n=r.n, baseline=view.baseline_arm)


def chart(df: pd.DataFrame, *, dataset: str, system: str, method: str, metric: str, n: int,
          baseline: str) -> alt.LayerChart:
    arms = list(df["arm"])
    x = alt.X("arm:N", sort=arms, title="arm", axis=alt.Axis(labelAngle=-40))
    y_title = f"{metric} ({method})"
    base = alt.Chart(df).encode(x=x)
    bars = base.mark_bar(width={"band": 0.7}).encode(
        y=alt.Y("value:Q", title=y_title, scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("model:N", scale=categorical(sorted(df["model"].unique())), legend=alt.Legend(title="model")),
        tooltip=[alt.Tooltip("arm:N"), alt.Tooltip("model:N"), alt.Tooltip("value:Q", format=".3f"),
                 alt.Tooltip("ci_low:Q", format=".3f"), alt.Tooltip("ci_high:Q", format=".3f"),
                 alt.Tooltip("identical_to:N")])
    whiskers = base.mark_rule(strokeWidth=1.5, color="#222").encode(y=alt.Y("ci_low:Q", title=y_title),
                                                                   y2=alt.Y2("ci_high:Q"))
    # written up the bar from its foot, so a long arm name never collides with its neighbour's;
    # above the whisker where the bar is too short to hold it
    text = {"angle": 270, "align": "left", "dx": 6, "fontSize": 11, "fontWeight": "bold"}
    inside = base.transform_filter(f"datum.value >= {SHORT_BAR}").transform_calculate(foot="0").mark_text(
        color="white", **text).encode(y=alt.Y("foot:Q"), text=alt.Text("mark:N"))
    above = base.transform_filter(f"datum.value < {SHORT_BAR}").mark_text(color="#222", **text).encode(
        y=alt.Y("ci_high:Q"), text=alt.Text("mark:N"))
    ref = alt.Chart(df[df["arm"] == baseline]).mark_rule(strokeDash=[4, 3], color="#555").encode(y=alt.Y("value:Q"))
    return alt.layer(bars, whiskers, inside, above, ref).properties(
        width=max(220, 34 * len(arms)), height=260,
        title=title(f"{dataset} · {system}: {metric} of {method} per arm (n = {n} queries)",
                    "whiskers: 95 % bootstrap interval; dashed: the baseline; ≡: the same per-query results"))
