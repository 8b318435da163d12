"""The Vega runtime every HTML chart loads: Vega, Vega-Lite and Vega-Embed in one classic
script (vl-convert's bundle, which sets `window.vegaEmbed`), written once under the charts'
directory. Each chart's page names it by a relative path, so the pages open offline, from
any copy of the whole directory, and weigh a few kilobytes instead of a megabyte each.

A module script would not do: a browser refuses to load one from a `file://` page.
Free of Altair at import, so the workflow can ask for the versions cheaply.
"""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

from crmatrix import atomic

# Where the runtime lies, relative to the charts' directory.
PATH = Path("vega") / "vega-embed.js"
# The packages whose versions decide the bundle's bytes: vl-convert carries the libraries, and
# Altair decides which Vega-Lite its specs are written for.
PACKAGES = ("altair", "vl-convert-python")


def versions() -> dict[str, str]:
    return {p: metadata.version(p) for p in PACKAGES}


def bundle() -> str:
    """The libraries for the Vega-Lite version Altair writes, under a line naming their versions
    (vl-convert gives the same bytes every time)."""
    import vl_convert
    from altair.utils.html import vl_version_for_vl_convert

    vl = vl_version_for_vl_convert()
    head = (f"// Vega {vl_convert.get_vega_version()}, Vega-Lite {vl.lstrip('v').replace('_', '.')}, Vega-Embed "
            f"{vl_convert.get_vega_embed_version()}: vl-convert {metadata.version('vl-convert-python')}'s bundle\n")
    return head + vl_convert.javascript_bundle(vl_version=vl)


def write(path: Path) -> None:
    atomic.write_text(Path(path), bundle())
