"""Quality against cost, one point per embedder (a model of the config, or a system that embeds
on its own) and language: index throughput, index size and query latency beside the headline."""

from __future__ import annotations

import altair as alt
import pandas as pd

from crmatrix.plots.style import categorical, title

# (column, axis title): each a panel, sharing the quality axis
COSTS = (("texts_per_s", "index throughput, texts/s (embedding only)"),
         ("index_mb", "index size, MB of vectors"),
         ("p50_ms", "search latency p50, ms"))


def chart(df: pd.DataFrame, *, metric: str) -> alt.HConcatChart:
    models = sorted(df["model"].unique())
    panels = []
    for i, (column, axis) in enumerate(COSTS):
        # the panels share the quality axis: its title once, on the first
        y = alt.Y("value:Q", title=f"{metric} (macro mean over the language's datasets)" if i == 0 else None,
                  scale=alt.Scale(zero=False))
        base = alt.Chart(df).transform_filter(f"isValid(datum.{column})")
        points = base.mark_point(filled=True, size=80).encode(
            x=alt.X(f"{column}:Q", scale=alt.Scale(type="log"), title=axis), y=y,
            color=alt.Color("model:N", scale=categorical(models), legend=alt.Legend(title="model")),
            shape=alt.Shape("language:N", legend=alt.Legend(title="language")),
            tooltip=[alt.Tooltip("model:N"), alt.Tooltip("language:N"), alt.Tooltip("system:N"), alt.Tooltip("arm:N"),
                     alt.Tooltip("method:N"), alt.Tooltip("value:Q", format=".3f"), alt.Tooltip("datasets:Q"),
                     alt.Tooltip(f"{column}:Q", format=".4~g"), alt.Tooltip("embedded:Q")])
        panels.append(points.properties(width=230, height=260))
    languages = df["language"].nunique()
    return alt.hconcat(*panels).resolve_scale(y="shared").properties(
        title=title(f"{metric} against cost per model ({len(models)} models, {languages} languages)",
                    "each model at the baseline knobs; throughput and size over the language's corpora, "
                    "as the matrix's own index jobs measured them"))
