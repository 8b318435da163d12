"""The charts and the report end to end: `all` writes results/plots/, `--report` holds every chart
with its caption, and a real headless browser draws them all without an error.

The matrix has two systems so that arms differ somewhere without an embedding model: the
fake CLI (tests/fakes/fake_search.py) ranks weakest-first under one arm, while the builtin
engine's lexical ranking ignores that variable, so all its arms are `≡ baseline`.

The browser is Debian's chromium (`apt-get install chromium`), driven by playwright, which
never downloads a browser of its own here; without either the test is skipped, saying which.
Its screenshot is kept in test-artifacts/ at the top of the checkout.
"""

import json
import re
import shutil
import sys
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, snakemake

from crmatrix.plots import names

FAKES = Path(__file__).parent / "fakes"
FAKE_CLI = [sys.executable, str(FAKES / "fake_search.py")]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = next((p for p in map(shutil.which, ("chromium", "chromium-browser")) if p), None)
CORPUS = {
    "pkg/config.py": "def parse_config(text):\n    return dict(line.split('=') for line in text.splitlines())\n",
    "pkg/store.py": ("class Store:\n    def save_value(self, key, value):\n        self.data[key] = value\n\n"
                     "    def load_value(self, key):\n        return self.data[key]\n\n"
                     "    def delete_key(self, key):\n        del self.data[key]\n"),
}
DATASET = [
    {"query": "parse config", "expected_symbol": "parse_config", "expected_file_suffix": "pkg/config.py"},
    {"query": "save value", "expected_symbol": "save_value", "expected_file_suffix": "pkg/store.py"},
    {"query": "load value", "expected_symbol": "load_value", "expected_file_suffix": "pkg/store.py"},
    {"query": "delete key", "expected_symbol": "delete_key", "expected_file_suffix": "pkg/store.py"},
]
ARMS = {"baseline": {}, "weakest": {"FAKE_RANKING": "weakest-first"}, "again": {"FAKE_RANKING": "weakest-first"}}


@pytest.fixture(scope="module")
def reported(tmp_path_factory):
    work = tmp_path_factory.mktemp("report")
    for rel, text in CORPUS.items():
        (work / "src" / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / "src" / rel).write_text(text)
    (work / "ds.json").write_text(json.dumps(DATASET))
    fake = {"type": "command", "options": {
        "index": [*FAKE_CLI, "index", "{corpus}", "{index}"],
        "search": [*FAKE_CLI, "search", "{index}", "{query}", "{k}"],
        "hits": "data.symbols[]", "fields": {"symbol": "name", "path": "file", "start_line": "line"}}}
    cfg = {"corpora": {"src": {"path": "src"}}, "datasets": {"store": {"file": "ds.json", "corpus": "src"}},
           "arms": ARMS, "systems": {"builtin": {"type": "builtin", "methods": ["lexical", "bm25"]}, "fake": fake},
           "headline_method": "lexical"}
    (work / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))  # arms in this order
    args = ("--configfile", str(work / "config.yaml"), "--cores", "2", "all")
    snakemake(work, *args)
    snakemake(work, *args, "--report", "results/report.html")
    return work


@pytest.mark.slow
def test_all_writes_every_chart_and_the_report_holds_each_with_its_caption(reported):
    stems = names.stems(["store"], {"builtin": list(ARMS), "fake": list(ARMS)}, "baseline", reference="builtin")
    assert {"leaderboard", "costs", "failures", "versus/fake"} <= set(stems)
    for stem in stems:
        for fmt in ("svg", "png", "html"):
            assert (reported / "results/plots" / f"{stem}.{fmt}").is_file(), f"{stem}.{fmt}"
    logs = sorted((reported / "logs").glob("plot_*.log")) + sorted((reported / "logs").glob("plot_*/**/*.log"))
    rows = [s for s in stems if s.startswith(("arms/", "transitions/"))]
    # one job per chart but a system's row charts (one job per system: two here, two charts each),
    # both latency charts and the models chart (one job) and costs with failures (one job); the runtime, the page
    assert len(rows) == 4 and len(logs) == len(stems) - len(rows) + 2 - 2 - 1 + 2
    assert {p: p.read_text() for p in logs} == {p: "" for p in logs}  # no warning either
    # one Vega runtime for every chart's page: a classic script (a module would not load from file://)
    runtime = (reported / "results/plots/vega/vega-embed.js").read_text()
    assert runtime.startswith("// Vega ") and "window.vegaEmbed=" in runtime
    pages = [reported / "results/plots" / f"{stem}.html" for stem in stems]
    assert max(p.stat().st_size for p in pages) < 60_000 < len(runtime)
    m = json.loads((reported / "results/matrix/phase-matrix.json").read_text())
    fake = next(r for r in m["rows"] if r["system"] == "fake")
    assert fake["cells"]["again"]["identical_to"] == "weakest" and fake["family"] == ["weakest"]
    # two systems: the leaderboard in the matrix (from the cells) and as a table atop the gallery
    board = m["leaderboard"]
    assert board["reference"] == "builtin" and {s["system"] for s in board["standings"]} == {"builtin", "fake"}
    assert [(p["upper"], p["lower"]) for p in board["pairs"]] == [tuple(s["system"] for s in board["standings"])]
    assert all(s["queries"] == 4 and s["datasets"] == 1 for s in board["standings"])
    assert "## Leaderboard: systems compared" in (reported / "results/matrix/phase-matrix.md").read_text()
    page = (reported / "results/plots/index.html").read_text()
    table = page[page.index('<section id="leaderboard">'):page.index('<section id="power">')]
    assert ">rank</th>" in table and "<td>fake</td>" in table and "<td>builtin</td>" in table
    assert [r["system"] for r in m["arm_ranks"]] == ["builtin", "fake"]
    report = (reported / "results/report.html").read_text()
    for stem in stems:
        assert f"results/plots/{stem}.svg" in report, stem
    # each dataset's audit beside its charts, with its caption
    assert "results/audit/store.html" in report and "flatters lexical" in report
    for phrase in ("diamonds pool them by random effects", "with its 95 % bootstrap interval over queries",
                   "one panel per system", "below them,",  # the captions of forest, arms, latency, the page
                   "in order of its pooled", "only on the queries both systems answered"):  # leaderboard, versus
        assert phrase in report, phrase


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium on this machine (Debian: apt-get install -y chromium); "
                                             "the report is not looked at in a browser")
def test_a_charts_page_draws_it_offline_with_the_shared_runtime(reported):
    """A chart's HTML page, opened from the disk: the runtime it loads by a relative path draws
    the chart (Vega-Embed's SVG renderer, with its tooltips), and nothing else is fetched."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e .[test])")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            errors, fetched = [], []
            page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.on("request", lambda req: fetched.append(req.url))
            chart = reported / "results/plots/arms/fake/store.html"
            page.goto(chart.as_uri())
            page.wait_for_selector("#vis svg.marks")
            drawn = page.evaluate("""(() => { const s = document.querySelector('#vis svg.marks');
                return [s.getBoundingClientRect().width, s.getBoundingClientRect().height,
                        s.querySelectorAll('path').length, Array.from(s.querySelectorAll('text'), t => t.textContent)];
                })()""")
            assert drawn[0] > 200 and drawn[1] > 200 and drawn[2] > 5, drawn
            # the title and the arms on the x axis, drawn by Vega in the browser from the page's spec
            assert {"store · fake: mrr of search per arm (n = 4 queries)", *ARMS} <= set(drawn[3]), drawn[3]
            page.screenshot(path=str(ARTIFACTS / "chart-arms.png"))
            assert errors == [], errors
            assert fetched == [chart.as_uri(), (reported / "results/plots/vega/vega-embed.js").as_uri()]
        finally:
            browser.close()


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium on this machine (Debian: apt-get install -y chromium); "
                                             "the report is not looked at in a browser")
def test_the_report_draws_every_chart_in_a_headless_browser(reported):
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e .[test])")
    stems = names.stems(["store"], {"builtin": list(ARMS), "fake": list(ARMS)}, "baseline", reference="builtin")
    assert {"leaderboard", "costs", "failures", "versus/fake"} <= set(stems)
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1600, "height": 1000})
            errors = []
            page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto((reported / "results/report.html").as_uri())
            # every chart of the report decodes as an image with a size
            sizes = page.evaluate("""async () => Promise.all(Object.values(results)
                .filter(r => r.mime_type === 'image/svg+xml').map(r => new Promise(done => {
                    const img = new Image(); img.onload = () => done([r.name, img.naturalWidth, img.naturalHeight]);
                    img.onerror = () => done([r.name, 0, 0]); img.src = r.data_uri; })))""")
            assert len(sizes) == len(stems) and all(w > 50 and h > 30 for _, w, h in sizes), sizes
            # the page with every chart, opened from the report's menu as a reader would
            page.get_by_text("1. Phase matrix").click()
            page.get_by_text("tables and every chart").locator("xpath=..").locator("a").first.click()
            gallery = page.wait_for_event("frameattached") if len(page.frames) < 2 else page.frames[-1]
            gallery.wait_for_selector("figure svg")
            drawn = gallery.evaluate("""Array.from(document.querySelectorAll('figure')).map(f => {
                const s = f.querySelector('svg'), r = s.getBoundingClientRect();
                return [f.id, r.width, r.height, s.querySelectorAll('path, text').length]; })""")
            assert sorted(d[0] for d in drawn) == sorted(stems)
            assert all(w > 50 and h > 30 and marks > 3 for _, w, h, marks in drawn), drawn
            assert gallery.evaluate("document.querySelectorAll('table').length") >= 3  # the matrix's tables
            page.set_viewport_size({"width": 1600, "height": min(16000, gallery.evaluate(
                "document.documentElement.scrollHeight") + 40)})
            page.wait_for_timeout(300)
            page.screenshot(path=str(ARTIFACTS / "report-gallery.png"))
            assert errors == [], errors
        finally:
            browser.close()
    assert re.match(rb"\x89PNG", (ARTIFACTS / "report-gallery.png").read_bytes())
