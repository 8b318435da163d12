"""Per arm: each dataset's paired Δ with its interval, pooled per language and overall."""

from __future__ import annotations

import altair as alt
import pandas as pd

from crmatrix.plots import frames, sources
from crmatrix.plots.style import categorical, title
from crmatrix.results.pool import Pooled

KINDS = ["dataset", "pooled", "overall"]


def draw(view: sources.View, *, system: str, arm: str) -> alt.LayerChart:
    """The chart of `arm` on `system` from the matrix's statistics (`crmatrix.plots.sources`)."""
    e = sources.pool(view, system, arm)
    overall = next((g for g in e.groups if g.kind == "overall"), None)
    v = overall and overall.verdict
    verdict = "" if v is None else f"{v.positive} positive / {v.negative} negative / {v.inert} inert"
    return chart(frames.forest(e, view.notes), system=system, arm=arm, baseline=view.baseline_arm,
                 metric=view.metric, overall=overall and overall.pooled, verdict=verdict)


def chart(df: pd.DataFrame, *, system: str, arm: str, baseline: str, metric: str, overall: Pooled | None,
          verdict: str) -> alt.LayerChart:
    y = alt.Y("label:N", sort=list(df["label"]), title=None)
    color = alt.Color("kind:N", scale=categorical(KINDS), legend=alt.Legend(title=None))
    base = alt.Chart(df).encode(y=y, color=color)
    x_title = f"Δ {metric}, {arm} − {baseline}"
    rules = base.mark_rule(strokeWidth=1.5).encode(x=alt.X("ci_low:Q", title=x_title), x2=alt.X2("ci_high:Q"))
    points = base.mark_point(filled=True, size=70, opacity=1).encode(
        x=alt.X("estimate:Q", title=x_title),
        shape=alt.Shape("kind:N", scale=alt.Scale(domain=KINDS, range=["square", "diamond", "diamond"]), legend=None),
        size=alt.Size("kind:N", scale=alt.Scale(domain=KINDS, range=[60, 160, 220]), legend=None),
        tooltip=[alt.Tooltip("label:N"), alt.Tooltip("group:N"), alt.Tooltip("estimate:Q", format="+.3f"),
                 alt.Tooltip("ci_low:Q", format="+.3f"), alt.Tooltip("ci_high:Q", format="+.3f"), alt.Tooltip("n:Q"),
                 alt.Tooltip("verdict:N")])
    zero = alt.Chart(pd.DataFrame({"x": [0.0]})).mark_rule(strokeDash=[4, 3], color="#555").encode(x=alt.X("x:Q"))
    head = "no dataset varied" if overall is None else (
        f"pooled {overall.estimate:+.3f} [{overall.ci_low:+.3f}, {overall.ci_high:+.3f}]"
        + ("" if overall.i2 is None else f", I² {overall.i2:.0%}") + f", τ² {overall.tau2:.4f}")
    return alt.layer(rules, points, zero).properties(
        width=360, height=max(80, 22 * len(df)),
        title=title(f"{arm} against {baseline} · {system}: Δ {metric} per dataset ({len(df[df.kind == 'dataset'])} "
                    f"datasets)", [f"{head}; {verdict}",
                                   "whiskers: Δ ± 1.96 SE; diamonds: random-effects pools (DerSimonian–Laird)"]))
