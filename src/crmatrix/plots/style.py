"""The look every chart shares: colours, titles, and saving in each format."""

from __future__ import annotations

from pathlib import Path

import altair as alt

# Okabe & Ito (2008), "Color Universal Design"; black last.
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"]
DIVERGING = "blueorange"
# One colour per direction of change, everywhere it is drawn.
DIRECTION_COLORS = {"improved": "#0072B2", "regressed": "#D55E00", "unchanged": "#999999"}
FORMATS = ("svg", "png", "html")
PNG_SCALE = 2


def categorical(values: list[str]) -> alt.Scale:
    """A colour scale giving `values` the palette's colours in order (cycled past eight)."""
    return alt.Scale(domain=list(values), range=[PALETTE[i % len(PALETTE)] for i in range(len(values))])


def title(text: str, subtitle: str | list[str] = ()) -> alt.TitleParams:
    return alt.TitleParams(text, subtitle=list([subtitle] if isinstance(subtitle, str) else subtitle),
                           anchor="start", subtitleColor="#444")


def finish(chart: alt.TopLevelMixin) -> alt.TopLevelMixin:
    """The look every chart shares."""
    return chart.configure_view(stroke=None).configure_axis(labelLimit=260, gridColor="#eee")


def save(chart: alt.TopLevelMixin, stem: Path) -> list[Path]:
    """`stem`.svg, .png and .html; the HTML carries Vega inline (`inline=True`), so it opens offline."""
    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    chart = finish(chart)
    out = []
    for fmt in FORMATS:
        path = stem.with_name(f"{stem.name}.{fmt}")
        if fmt == "png":
            chart.save(str(path), scale_factor=PNG_SCALE)
        elif fmt == "html":
            chart.save(str(path), inline=True)
        else:
            chart.save(str(path))
        out.append(path)
    return out
