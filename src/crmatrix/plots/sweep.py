"""A sweep's grid: each cell's headline metric per dataset, the axes being the sweep's knobs.

Two axes: one small heatmap per dataset (first knob across, second down); one axis: one
heatmap, a row per dataset. Colour is Δ against the baseline, comparable across datasets
whose levels differ; the text is the metric itself; the row's best cell is outlined.
"""

from __future__ import annotations

import altair as alt
import pandas as pd

from crmatrix.plots import frames, sources
from crmatrix.plots.style import DIVERGING, title


def draw(view: sources.View, *, system: str, sweep: str, grid: dict) -> alt.TopLevelMixin:
    """The grid of `sweep` on `system` from the matrix's statistics (`crmatrix.plots.sources`);
    `grid`: the sweep's axes and cells (`crmatrix.config.sweeps.grids`)."""
    method = sources.rows(view, system)[0].method
    return chart(frames.sweep(view, grid, system), sweep=sweep, system=system, grid=grid, metric=view.metric,
                 method=method, baseline=view.baseline_arm)


def chart(df: pd.DataFrame, *, sweep: str, system: str, grid: dict, metric: str, method: str,
          baseline: str) -> alt.TopLevelMixin:
    axes = grid["axes"]
    extent = max(0.02, float(df["delta_abs"].abs().max())) if df["delta_abs"].notna().any() else 0.02
    x = alt.X("x:O", sort=axes[0]["values"], title=axes[0]["var"], axis=alt.Axis(labelAngle=0))
    rows = list(dict.fromkeys(df["row"]))
    y = (alt.Y("y:O", sort=axes[1]["values"], title=axes[1]["var"]) if len(axes) > 1
         else alt.Y("row:N", sort=rows, title="dataset (queries)"))
    base = alt.Chart().encode(x=x, y=y)
    cells = base.mark_rect().encode(
        color=alt.Color("delta_abs:Q", title=f"Δ {metric} against {baseline}",
                        scale=alt.Scale(scheme=DIVERGING, domain=[-extent, extent], domainMid=0),
                        legend=alt.Legend(format="+.3f")),
        stroke=alt.condition(alt.datum.best, alt.value("#000"), alt.value("white")),
        strokeWidth=alt.condition(alt.datum.best, alt.value(2.5), alt.value(1)),
        tooltip=[alt.Tooltip("row:N"), alt.Tooltip("arm:N"), alt.Tooltip("value:Q", format=".3f", title=metric),
                 alt.Tooltip("delta_abs:Q", format="+.3f", title="Δ"), alt.Tooltip("identical_to:N")])
    dark = alt.expr.abs(alt.datum.delta_abs) > 0.6 * extent
    text = base.mark_text(fontSize=10).encode(text=alt.Text("text:N"), color=alt.condition(dark, alt.value("white"),
                                                                                                 alt.value("black")))
    knobs = " × ".join(f"{a['var']} ({a['name']})" for a in axes)
    head = title(f"sweep {sweep} · {system}: {metric} of {method} per cell ({len(grid['cells'])} cells, "
                 f"{len(rows)} datasets)",
                 [knobs, f"text: {metric}; colour: Δ against {baseline}; outlined: the dataset's best cell"])
    layer = alt.layer(cells, text, data=df)
    if len(axes) == 1:
        return layer.properties(width=max(160, 48 * len(axes[0]["values"])), height=max(40, 22 * len(rows)),
                                title=head)
    return layer.properties(width=max(120, 44 * len(axes[0]["values"])),
                            height=max(80, 26 * len(axes[1]["values"]))).facet(
        facet=alt.Facet("row:N", sort=rows, title=None), columns=4, title=head)
