"""Across datasets: Δ against the baseline, datasets × arms, coloured by relative Δ."""

from __future__ import annotations

import altair as alt
import pandas as pd

from crmatrix.plots import frames
from crmatrix.plots.sources import View
from crmatrix.plots.style import DIVERGING, title


def draw(view: View) -> alt.LayerChart:
    """Every row and arm of the matrix's statistics (`crmatrix.plots.sources`): the significance
    its cells show is corrected across each row's arms, so it draws from the whole matrix."""
    return chart(frames.heatmap(view), metric=view.metric, baseline=view.baseline_arm, arms=view.arms)


def chart(df: pd.DataFrame, *, metric: str, baseline: str, arms: list[str]) -> alt.LayerChart:
    extent = max(0.05, float(df["delta_rel"].abs().max())) if df["delta_rel"].notna().any() else 0.05
    x = alt.X("arm:N", sort=[a for a in arms if a != baseline], title="arm",
              axis=alt.Axis(labelAngle=-40, orient="top"))
    y = alt.Y("row:N", title="dataset · system (queries)", sort=list(dict.fromkeys(df["row"])))
    base = alt.Chart(df).encode(x=x, y=y)
    cells = base.mark_rect(stroke="white").encode(
        color=alt.Color("delta_rel:Q", title=f"Δ {metric} (relative)",
                        scale=alt.Scale(scheme=DIVERGING, domain=[-extent, extent], domainMid=0),
                        legend=alt.Legend(format="+.0%")),
        tooltip=[alt.Tooltip("row:N"), alt.Tooltip("arm:N"), alt.Tooltip("delta_abs:Q", format="+.3f"),
                 alt.Tooltip("delta_rel:Q", format="+.1%"), alt.Tooltip("p_holm:Q", format=".3f", title="p (Holm)"),
                 alt.Tooltip("p:Q", format=".3f", title="p (unadjusted)"), alt.Tooltip("identical_to:N")])
    # white on the darkest cells of either end of the scale, black elsewhere
    dark = alt.expr.abs(alt.datum.delta_rel) > 0.6 * extent
    text = base.mark_text(fontSize=10).encode(text=alt.Text("text:N"), color=alt.condition(dark, alt.value("white"),
                                                                                                 alt.value("black")))
    rows = df["row"].nunique()
    return alt.layer(cells, text).properties(
        width=max(200, 56 * (len(arms) - 1)), height=max(60, 26 * rows),
        title=title(f"Δ {metric} against {baseline}: {rows} dataset rows × {len(arms) - 1} arms",
                    "colour: relative Δ; * corrected paired test p < 0.05; ≡: identical per-query results"))
