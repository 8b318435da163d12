"""Every figure the README and docs/results.md state about a measurement is in the file of
benchmarks/results/ that its paragraph links (a table: the paragraph just above it): a number
copied wrong, rounded or worked out by hand fails here, and so does a results paragraph with a
figure that links no such file."""

import re
from pathlib import Path

import pytest
from conftest import ROOT

RESULTS = ROOT / "benchmarks" / "results"
# The results text of each page: docs/results.md all of it, the README its section pointing there.
PAGES = {"README.md": "What it has found", "docs/results.md": None}
SOURCE = re.compile(r"\]\(([^)\s#]*benchmarks/results/[^)\s#]+)\)")
# a word holding a letter or @ (MiniLM-L6, DS-1000, Acc@5, p50, FTS5) is a name, not a figure
NAME = re.compile(r"[\w@.-]*[A-Za-z@][\w@.-]*")
NUMBER = re.compile(r"([−+±-]?)(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?")


def figures(text: str) -> list[tuple[str, str]]:
    """(sign, value) of each number in `text`: "-" for a minus (either spelling), "±" kept, a
    plus dropped; thousands commas dropped, decimals kept as written (0.50 is not 0.5)."""
    out = []
    for sign, whole, frac in NUMBER.findall(text):
        sign = {"−": "-", "+": ""}.get(sign, sign)
        out.append((sign, whole.replace(",", "") + frac))
    return out


def stated(sign: str, value: str, source: set[tuple[str, str]]) -> bool:
    """Whether the source holds the figure: a ± or unsigned figure may be written either way there."""
    return (sign, value) in source or (sign == "±" and ("", value) in source)


def prose(block: str) -> str:
    """A block's words that can hold a figure: no code spans, link targets or names."""
    text = re.sub(r"`[^`\n]*`", " ", block)
    text = re.sub(r"\]\([^)]*\)", "]", text)
    return NAME.sub(" ", text)


def blocks(text: str) -> list[str]:
    """A page's paragraphs, list items and tables, without headings and code blocks."""
    text = re.sub(r"^ *```.*?^ *```\n", "", text, flags=re.M | re.S)
    out: list[str] = []
    for chunk in re.split(r"\n\s*\n", text):
        lines = [line for line in chunk.splitlines() if not line.startswith("#")]
        if not lines or all(line.startswith("    ") for line in lines):
            continue
        items = re.split(r"\n(?=- )", "\n".join(lines))
        out.extend(items)
    return out


def results_text(page: str) -> str:
    text = (ROOT / page).read_text()
    if PAGES[page] is None:
        return text
    parts = re.split(r"^## (.+)$", text, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2], strict=True))[PAGES[page]]


def unsourced(page: str) -> list[str]:
    """What is wrong with the page's figures: each figure its linked file does not hold, and
    each results block with a figure and no linked file."""
    bad, before = [], []
    results = blocks(results_text(page))
    for block in blocks((ROOT / page).read_text()):
        sources = [(ROOT / page).parent / p for p in SOURCE.findall(block)]
        if not sources and block.startswith("|"):
            sources = before  # a table: its caption's files
        before = sources
        found = figures(prose(block))
        if not found:
            continue
        if not sources:
            if block in results:
                bad.append(f"no benchmarks/results/ file linked for: {block[:80]!r}")
            continue
        missing = [p for p in sources if not p.resolve().is_file()]
        if missing:
            bad.append(f"links a file that is not there: {missing}")
            continue
        held = {f for p in sources for f in figures(p.read_text())}
        for sign, value in found:
            if not stated(sign, value, held):
                bad.append(f"{sign}{value} is not in {', '.join(p.name for p in sources)}: {block[:80]!r}")
    return bad


def test_figures_are_read_as_written():
    assert figures(prose("−0.062 [−0.131, +0.008]; ±0.016; 1,785 queries; 0.50 in 18.6 min")) == [
        ("-", "0.062"), ("-", "0.131"), ("", "0.008"), ("±", "0.016"), ("", "1785"), ("", "0.50"), ("", "18.6")]
    # names are not figures; a code span or a link target is not prose
    assert figures(prose("MiniLM-L6 on DS-1000, Acc@5 and p50 (`int8`, [x](a-2026-12-01.md))")) == []
    assert figures(prose("0.175–0.350 and 2–5 %")) == [("", "0.175"), ("", "0.350"), ("", "2"), ("", "5")]
    held = set(figures("-0.062 ±0.016 0.5 +0.1"))
    assert stated("-", "0.062", held) and not stated("", "0.062", held)
    assert stated("±", "0.016", held) and stated("", "0.1", held) and not stated("", "0.50", held)


def test_a_table_takes_its_captions_file_and_a_figure_needs_one(tmp_path, monkeypatch):
    import test_results_figures as mod

    (tmp_path / "benchmarks" / "results").mkdir(parents=True)
    (tmp_path / "benchmarks" / "results" / "x.md").write_text("| a | 0.464 | -0.2 |\n")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "results.md").write_text(
        "# R\n\nIntro.\n\n## A\n\nSee ([figures](../benchmarks/results/x.md)):\n\n| m | v |\n|---|---|\n"
        "| bm25 | 0.464 |\n| hybrid | −0.2 |\n\n- listed: 0.464 ([f](../benchmarks/results/x.md))\n- not: 0.9\n")
    monkeypatch.setattr(mod, "ROOT", tmp_path)
    assert unsourced("docs/results.md") == ["no benchmarks/results/ file linked for: '- not: 0.9'"]
    (tmp_path / "docs" / "results.md").write_text("# R\n\nIntro.\n\n## A\n\n0.522 ([f](../benchmarks/results/x.md))\n")
    assert unsourced("docs/results.md") == ["0.522 is not in x.md: '0.522 ([f](../benchmarks/results/x.md))'"]


@pytest.mark.parametrize("page", PAGES)
def test_every_figure_is_in_the_results_file_its_paragraph_links(page):
    assert not unsourced(page), f"{page}:\n" + "\n".join(unsourced(page))


def test_the_readme_points_to_the_results_and_the_results_have_figures():
    assert "(docs/results.md)" in results_text("README.md")
    linked = {Path(p).name for p in SOURCE.findall((ROOT / "docs" / "results.md").read_text())}
    assert len(linked) >= 5, linked  # the arena, the seed matrix, the models, SWE-bench, DS-1000
