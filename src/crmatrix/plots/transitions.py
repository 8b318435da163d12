"""Per dataset: where each query's first relevant hit moved, baseline rank → arm rank."""

from __future__ import annotations

import math

import altair as alt
import pandas as pd

from crmatrix.labels import dataset_label
from crmatrix.plots import frames, sources
from crmatrix.plots.style import DIRECTION_COLORS, title

TICKS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000]


def draw(view: sources.View, *, system: str, dataset: str) -> alt.FacetChart | alt.Chart:
    """The chart of `dataset` on `system` from the matrix's statistics (`crmatrix.plots.sources`)."""
    r = sources.row(view, dataset, system)
    return chart(frames.transitions(r, view.arms), dataset=dataset_label(dataset, view.notes.get(dataset)),
                 system=system, method=r.method, n=r.n, baseline=view.baseline_arm, arms=view.arms)


def chart(df: pd.DataFrame, *, dataset: str, system: str, method: str, n: int, baseline: str,
          arms: list[str]) -> alt.FacetChart | alt.Chart:
    """A miss (rank 0 in the frame) is drawn past the deepest rank found, at twice the next power of ten."""
    head = title(f"{dataset} · {system}: per-query rank, {baseline} → arm ({method}, n = {n} queries)",
                 "below the diagonal: improved; miss: not found; arms identical to another are drawn once")
    if df.empty:  # every arm answers as the baseline (or there is none): say so rather than draw blank axes
        return alt.Chart(pd.DataFrame({"text": [f"every arm answers exactly as {baseline}"]})).mark_text(
            fontSize=13, align="left").encode(text=alt.Text("text:N")).properties(width=360, height=40, title=head)
    deepest = int(max(df["base_rank"].max(), df["arm_rank"].max(), 1)) if len(df) else 1
    miss = 2 * 10 ** (math.floor(math.log10(deepest)) + 1)
    df = df.assign(x=df["base_rank"].where(df["base_rank"] > 0, miss), y=df["arm_rank"].where(df["arm_rank"] > 0, miss),
                   layer="query")
    # the diagonal's two ends, per panel: a facet draws one data set, so they travel in it
    ends = pd.DataFrame([{"arm": a, "x": v, "y": v, "layer": "diagonal"}
                         for a in dict.fromkeys(df["arm"]) for v in (1, miss)])
    df = pd.concat([df, ends], ignore_index=True)
    ticks = [t for t in TICKS if t <= deepest] + [miss]
    label = f"datum.value >= {miss} ? 'miss' : datum.label"
    scale = alt.Scale(type="log", domain=[0.8, miss * 1.25])
    axis = alt.Axis(values=ticks, labelExpr=label, labelOverlap=False)
    points = alt.Chart().transform_filter("datum.layer == 'query'").mark_circle(opacity=0.75).encode(
        x=alt.X("x:Q", scale=scale, axis=axis, title=f"rank under {baseline}"),
        y=alt.Y("y:Q", scale=scale, axis=axis, title="rank under the arm"),
        color=alt.Color("direction:N", scale=alt.Scale(domain=list(DIRECTION_COLORS),
                                                       range=list(DIRECTION_COLORS.values())),
                        legend=alt.Legend(title="query")),
        size=alt.Size("queries:Q", scale=alt.Scale(range=[40, 400]),
                      legend=alt.Legend(title="queries", format="d", tickMinStep=1)),
        tooltip=[alt.Tooltip("arm:N"), alt.Tooltip("base_rank:Q"), alt.Tooltip("arm_rank:Q"),
                 alt.Tooltip("direction:N"), alt.Tooltip("queries:Q")])
    diagonal = alt.Chart().transform_filter("datum.layer == 'diagonal'").mark_line(
        color="#aaa", strokeDash=[4, 3]).encode(x=alt.X("x:Q"), y=alt.Y("y:Q"))
    shown = [a for a in arms if a in set(df["arm"])]
    return alt.layer(diagonal, points, data=df).properties(width=180, height=180).facet(
        facet=alt.Facet("arm:N", sort=shown, title=None), columns=4, title=head)
