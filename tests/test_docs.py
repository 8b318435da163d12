"""The documentation against the project: docs/layout.md names what is there and nothing that
is not, every relative link of the README and docs/ reaches a file (and heading), each page
leads back to the README, and the README's rule graph picture is the workflow's."""

import re
import subprocess
import unicodedata
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import BIN, DOC_PAGES, ROOT

LAYOUT = ROOT / "docs" / "layout.md"
LIB = ROOT / "src" / "crmatrix"
# An entry of the layout: a list item whose first word is a code span naming a path relative
# to its parent item's.
ENTRY = re.compile(r"^( *)- `([^`]+)`")


def sections(text: str) -> dict[str, str]:
    """A page's `## ` sections by title."""
    parts = re.split(r"^## (.+)$", text, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def layout_entries(text: str) -> list[str]:
    """The paths the list items of `text` name, each joined to its parent item's path."""
    out, stack = [], []  # stack: (indent, path) of the items enclosing the current one
    for line in text.splitlines():
        m = ENTRY.match(line)
        if not m:
            continue
        indent = len(m[1])
        while stack and stack[-1][0] >= indent:
            stack.pop()
        path = (stack[-1][1] if stack else "") + m[2]
        stack.append((indent, path))
        out.append(path)
    return out


@pytest.fixture(scope="module")
def named() -> list[str]:
    return layout_entries(sections(LAYOUT.read_text())["The repository"])


def test_layout_entries_are_read_as_paths():
    text = "- `a/` — x\n  - `b.py` — y\n    continued `c.py`\n  - `c/` — z\n    - `d` — w\n- `e` — v\n"
    assert layout_entries(text) == ["a/", "a/b.py", "a/c/", "a/c/d", "e"]


def test_every_path_the_layout_names_exists(named):
    missing = [p for p in named if not (ROOT / p).exists() or (p.endswith("/") and not (ROOT / p).is_dir())]
    assert not missing, f"docs/layout.md names what is not there: {missing}"
    assert len(named) == len(set(named)), "docs/layout.md names a path twice"


def test_the_layout_names_everything_that_must_be_there(named):
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    top = {p.split("/")[0] + ("/" if "/" in p else "") for p in tracked.splitlines()}
    library = {f"src/crmatrix/{p.name}" + ("/" if p.is_dir() else "") for p in LIB.iterdir()
               if p.name != "__pycache__"}
    rules = {f"workflow/rules/{p.name}" for p in (ROOT / "workflow" / "rules").iterdir()}
    benchmarks = {f"benchmarks/{p.name}" for p in (ROOT / "benchmarks").glob("*.py")}
    pages = {f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md")}
    for kind, paths in [("top-level entry", top | {"docs/"}), ("library module or package", library),
                        ("rule file", rules), ("benchmark", benchmarks), ("docs page", pages)]:
        assert paths, kind
        assert not sorted(paths - set(named)), f"docs/layout.md leaves out a {kind}: {sorted(paths - set(named))}"


def slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces to hyphens."""
    text = heading.replace("`", "").strip().lower()
    return "".join(c for c in text if c in " -_" or unicodedata.category(c)[0] in "LN").replace(" ", "-")


def unfenced(text: str) -> str:
    """A page without its fenced code blocks (where `# x` is a comment, not a heading)."""
    return re.sub(r"^ *```.*?^ *```", "", text, flags=re.M | re.S)


def prose(text: str) -> str:
    """A page without its code blocks and code spans, where a link is not a link."""
    return re.sub(r"`[^`\n]*`", "", unfenced(text))


def anchors(page: Path) -> set[str]:
    """The anchors of a page's headings; a repeated heading's get -1, -2, ... as on GitHub."""
    seen: dict[str, int] = {}
    out = set()
    for heading in re.findall(r"^#{1,6} (.+)$", unfenced(page.read_text()), flags=re.M):
        base = slug(heading)
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def test_slugs_are_githubs():
    assert slug("Before spending a run: what the loader makes of a file") == \
        "before-spending-a-run-what-the-loader-makes-of-a-file"
    assert slug("The default matrix (`config/config.yaml`)") == "the-default-matrix-configconfigyaml"
    assert slug("Splits: iterate on dev, confirm once on test") == "splits-iterate-on-dev-confirm-once-on-test"


@pytest.mark.parametrize("page", DOC_PAGES, ids=lambda p: p.name)
def test_every_relative_link_reaches_a_file_and_heading(page):
    bad = []
    for target in re.findall(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)", prose(page.read_text())):
        if re.match(r"[a-z]+:", target):  # https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists() or not dest.is_relative_to(ROOT):
            bad.append(f"{target}: no such file in the project")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            bad.append(f"{target}: no such heading in {dest.relative_to(ROOT)}")
    assert not bad, f"{page.relative_to(ROOT)}: " + "; ".join(bad)


@pytest.mark.parametrize("page", DOC_PAGES[1:], ids=lambda p: p.name)
def test_each_page_says_what_it_is_and_leads_back_to_the_readme(page):
    lines = page.read_text().splitlines()
    assert lines[0].startswith("# ") and not lines[1].strip(), f"{page.name}: a title, then a blank line"
    first = " ".join(lines[2:lines.index("", 2)])
    assert "](../README.md)" in first, f"{page.name}: its first paragraph links back to the README"
    assert f"(docs/{page.name})" in (ROOT / "README.md").read_text(), f"the README links to docs/{page.name}"


def test_the_readme_stays_short():
    assert len((ROOT / "README.md").read_text().splitlines()) <= 150


def test_the_rule_graph_picture_is_the_workflows():
    """docs/img/rulegraph.svg has the rules and edges `snakemake --rulegraph` gives now;
    to redraw it: `snakemake --rulegraph | dot -Tsvg > docs/img/rulegraph.svg`."""
    dot = subprocess.run([str(BIN / "snakemake"), "--rulegraph"], cwd=ROOT, capture_output=True, text=True,
                         check=True, timeout=300).stdout
    labels = dict(re.findall(r"^\s*(\d+)\[label = \"(\w+)\"", dot, flags=re.M))
    edges = {(labels[a], labels[b]) for a, b in re.findall(r"^\s*(\d+) -> (\d+)", dot, flags=re.M)}
    assert labels and edges

    svg = ET.parse(ROOT / "docs" / "img" / "rulegraph.svg").getroot()
    ns = {"s": "http://www.w3.org/2000/svg"}
    drawn = {g.find("s:title", ns).text: g.find("s:text", ns).text
             for g in svg.iterfind(".//s:g[@class='node']", ns)}
    drawn_edges = {tuple(drawn[n] for n in g.find("s:title", ns).text.split("->"))
                   for g in svg.iterfind(".//s:g[@class='edge']", ns)}
    assert sorted(drawn.values()) == sorted(labels.values()), "redraw docs/img/rulegraph.svg"
    assert drawn_edges == edges, "redraw docs/img/rulegraph.svg"


def test_the_documented_k_is_the_configs_top_k_and_its_default():
    """docs/systems.md says what `{k}` is filled with and how to change it; the code agrees."""
    from crmatrix import config

    text = " ".join((ROOT / "docs" / "systems.md").read_text().split())
    m = re.search(r"`\{k\}` is how many hits a query asks for: the config's `top_k`, default (\d+),", text)
    assert m, "docs/systems.md: say what {k} is where the placeholders are listed"
    minimal = {"corpora": {"c": {"path": "."}}, "datasets": {"d": {"file": "d.json", "corpus": "c"}},
               "arms": {"baseline": {}}, "systems": {"builtin": {"type": "builtin"}}}
    assert config.from_dict(minimal).top_k == int(m[1])
    n = int(re.search(r"`top_k: (\d+)` at the top level of the config changes it", text)[1])
    assert config.from_dict({**minimal, "top_k": n}).top_k == n
