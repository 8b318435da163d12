"""One system against the reference system: each dataset's paired Δ of the headline metric on
the queries both answered, with its interval, and the random-effects pool over datasets."""

from __future__ import annotations

import altair as alt
import pandas as pd

from crmatrix import CrmatrixError
from crmatrix.plots import frames
from crmatrix.plots.style import categorical, title
from crmatrix.results.versus import Compared

KINDS = ["dataset", "overall"]


def draw(table: Compared, system: str) -> alt.LayerChart:
    """The forest of `system` in a comparison of systems (`crmatrix.analysis.versus.compare`)."""
    entry = next((v for v in table.versus if v.system == system), None)
    if entry is None:
        raise CrmatrixError(f"plots: no comparison of system {system!r} with the reference {table.reference!r} "
                            f"(compared: {', '.join(v.system for v in table.versus) or 'none'})")
    df = frames.versus(entry)
    metric, reference = table.metric, table.reference
    y = alt.Y("label:N", sort=list(df["label"]), title=None)
    color = alt.Color("kind:N", scale=categorical(KINDS), legend=None)
    base = alt.Chart(df).encode(y=y, color=color)
    x_title = f"Δ {metric}, {system} − {reference}"
    rules = base.mark_rule(strokeWidth=1.5).encode(x=alt.X("ci_low:Q", title=x_title), x2=alt.X2("ci_high:Q"))
    points = base.mark_point(filled=True, opacity=1).encode(
        x=alt.X("estimate:Q", title=x_title),
        shape=alt.Shape("kind:N", scale=alt.Scale(domain=KINDS, range=["square", "diamond"]), legend=None),
        size=alt.Size("kind:N", scale=alt.Scale(domain=KINDS, range=[60, 220]), legend=None),
        tooltip=[alt.Tooltip("label:N"), alt.Tooltip("estimate:Q", format="+.3f"),
                 alt.Tooltip("ci_low:Q", format="+.3f"), alt.Tooltip("ci_high:Q", format="+.3f"), alt.Tooltip("n:Q"),
                 alt.Tooltip("p:Q", format=".4f"), alt.Tooltip("verdict:N")])
    zero = alt.Chart(pd.DataFrame({"x": [0.0]})).mark_rule(strokeDash=[4, 3], color="#555").encode(x=alt.X("x:Q"))
    p = entry.pooled
    head = "no dataset varied" if p is None else (
        f"pooled {p.estimate:+.3f} [{p.ci_low:+.3f}, {p.ci_high:+.3f}]" + ("" if p.i2 is None else f", I² {p.i2:.0%}"))
    paired = sum(s.n for s in entry.studies)
    left = sum(s.left_out for s in entry.studies)
    return alt.layer(rules, points, zero).properties(
        width=360, height=max(80, 22 * len(df)),
        title=title(f"{system} against {reference}: Δ {metric} per dataset ({len(entry.studies)} datasets)",
                    [f"{head}; paired on the {paired} queries both answered ({left} left out: a failure on "
                     "either side)", "whiskers: Δ ± 1.96 SE; diamond: random-effects pool (DerSimonian–Laird)"]))
