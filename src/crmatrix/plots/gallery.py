"""One self-contained page: panels above all (the leaderboard of systems, what the matrix can
tell: `crmatrix.plots.power`), every chart (inline SVG) with its caption and the charts not
drawn with why, and the matrix's tables."""

from __future__ import annotations

import html

from markdown_it import MarkdownIt

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2rem; color: #222; max-width: 1600px; }
table { border-collapse: collapse; font-size: 12px; margin: 1rem 0; }
th, td { border: 1px solid #ddd; padding: 3px 6px; vertical-align: top; }
th { background: #f4f4f4; }
figure { margin: 2rem 0; }
figcaption { font-size: 13px; color: #444; max-width: 70ch; }
.charts { display: flex; flex-wrap: wrap; gap: 1rem 3rem; }
.positive { color: #0072B2; } .negative { color: #D55E00; } .flat { color: #555; }
"""


def markdown_page(title: str, text: str) -> str:
    """A Markdown document as one self-contained page in the gallery's style (for the report)."""
    body = MarkdownIt("commonmark", {"html": False}).enable("table").render(text)
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title>"
            f"<style>{STYLE}</style></head><body>\n{body}</body></html>\n")


def section(section_id: str, text: str) -> str:
    """Markdown (a part of the matrix's) as a section of the page."""
    body = MarkdownIt("commonmark", {"html": False}).enable("table").render(text)
    return f'<section id="{html.escape(section_id)}">{body}</section>'


def page(title: str, matrix_md: str, figures: list[tuple[str, str, str]], panel: str = "",
         absent: list[tuple[str, str]] = ()) -> str:
    """`figures`: (stem, caption, SVG text) in the order they are shown, grouped by kind of chart;
    `panel`: HTML shown first; `absent`: (charts, why) not drawn, said above the charts."""
    tables = MarkdownIt("commonmark", {"html": True}).enable("table").render(matrix_md)
    sections = [f'<p class="absent">Not drawn: {html.escape(what)} — {html.escape(why)}.</p>' for what, why in absent]
    current = None
    for stem, caption, svg in figures:
        kind = stem.split("/", 1)[0]
        if kind != current:
            sections.append(("</div>" if current else "")
                            + f'<h2 id="{kind}">{html.escape(kind)}</h2><div class="charts">')
            current = kind
        sections.append(f'<figure id="{html.escape(stem)}">{svg}<figcaption><code>{html.escape(stem)}</code>: '
                        f"{html.escape(caption)}</figcaption></figure>")
    if current:
        sections.append("</div>")
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title>"
            f"<style>{STYLE}</style></head><body>\n{panel}\n<h1>Charts</h1>\n" + "\n".join(sections)
            + f"\n<hr>\n{tables}\n</body></html>\n")
