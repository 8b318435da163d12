"""The look every chart shares: colours, titles, and saving in each format."""

from __future__ import annotations

import html
import json
import os
from pathlib import Path

import altair as alt
import vl_convert
from altair.utils.html import vl_version_for_vl_convert

from crmatrix import atomic

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


_rendered = False  # whether this process has started vl-convert's renderer (its threads)


def renderer_started() -> bool:
    """Whether this process has drawn a chart: a process forked from it could not draw one."""
    return _rendered


def save(chart: alt.TopLevelMixin, stem: Path, runtime: Path) -> list[Path]:
    """`stem`.svg, .png and .html, each written whole or not at all; the HTML loads the Vega
    runtime (`crmatrix.plots.runtime`) at `runtime` by its path relative to the page.
    The spec goes to vl-convert as Altair's own `save` hands it, unvalidated: a chart's
    structure is its code's, which the tests validate (tests/test_plots.py), and checking it
    against the Vega-Lite schema again in every chart's job took a sixth of the job's time."""
    global _rendered
    stem = Path(stem)
    spec = finish(chart).to_dict(validate=False)
    vl_version = vl_version_for_vl_convert()
    _rendered = True
    paths = {fmt: stem.with_name(f"{stem.name}.{fmt}") for fmt in FORMATS}
    svg = vl_convert.vegalite_to_svg(spec, vl_version=vl_version)
    atomic.write_text(paths["svg"], svg)
    # rasterised from that SVG: the bytes vegalite_to_png gives (a test holds them to it),
    # without compiling and rendering the chart a second time (two thirds of the PNG's time)
    atomic.write_bytes(paths["png"], vl_convert.svg_to_png(svg, scale=PNG_SCALE))
    atomic.write_text(paths["html"], page(spec, os.path.relpath(runtime, paths["html"].parent)))
    return list(paths.values())


def _script(text: str) -> str:
    """`text` (JSON) safe inside a script element: nothing in it can close the element."""
    return text.replace("</", "<\\/")


def page(spec: dict, runtime: str) -> str:
    """The chart's interactive page: its Vega-Lite spec drawn by the runtime at `runtime` (a
    relative URL); without that file the page says so instead of staying blank."""
    name = (spec.get("title") or {}).get("text", "chart")
    missing = f"The Vega runtime {runtime} is missing: this page draws its chart with it."
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{html.escape(name)}</title>
<script src="{html.escape(runtime)}"></script>
</head>
<body>
<div id="vis"></div>
<script>
if (typeof vegaEmbed === "undefined") {{
  document.getElementById("vis").textContent = {_script(json.dumps(missing))};
}} else {{
  vegaEmbed("#vis", {_script(json.dumps(spec, sort_keys=True, ensure_ascii=False))}, {{"mode": "vega-lite"}})
    .catch(console.error);
}}
</script>
</body>
</html>
"""
