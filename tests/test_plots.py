"""Every chart of a small hand-made matrix (tests/fixture_runs.py), each drawn by its own stage as
the workflow's jobs draw them: saved in each format, parseable, its HTML loading the one shared
Vega runtime, its Vega-Lite spec equal to the snapshot; the gallery with its power panel; and
the refusal to draw runs made from different inputs side by side.
CRMATRIX_UPDATE_SNAPSHOTS=1 rewrites the snapshots."""

import dataclasses
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import altair as alt
import fixture_runs
import pandas as pd
import pytest
from conftest import chart_data, chart_spec

from crmatrix import CrmatrixError, atomic
from crmatrix.analysis.matrix import assemble as matrix
from crmatrix.plots import arms, cellview, forest, frames, latency, names, sources, style
from crmatrix.results.times import RunTimes
from crmatrix.stages import (
    plot_forest,
    plot_gallery,
    plot_heatmap,
    plot_latency,
    plot_rows,
    plot_sweep,
)

SNAPSHOTS = Path(__file__).parent / "snapshots" / "plots"
# system -> arm -> the config's name of its model, as the workflow hands them (common.smk's chart_models)
MODELS = {"builtin": {**{a: "minilm" for a in fixture_runs.ARMS}, "strict": "minilm-int8"}}


@pytest.fixture(scope="module")
def drawn(tmp_path_factory):
    """Each chart drawn by its stage into plots/ from the files its job is handed (the matrix, or
    the cells of its arms and the baseline's), and the gallery of them all."""
    d = tmp_path_factory.mktemp("plots")
    runs = fixture_runs.runs()
    m = matrix.build(runs, "baseline", "hybrid", fixture_runs.ARMS)
    matrix.write(m, d / "m.json", d / "m.md")
    paths = []
    for r in runs:
        paths.append(d / "runs" / f"{r.dataset}.{r.arm}.json")
        r.write(paths[-1])
    cells = fixture_runs.cell_files(paths, "baseline", "hybrid", times=lambda run: run.with_suffix(".times.json"))
    out, stats, runtime = d / "plots", [d / "m.json"], d / "plots" / "vega" / "vega-embed.js"
    sweeps = {w: [c["arm"] for c in g["cells"]] for w, g in SWEEPS.items()}
    stems = names.stems(["alpha", "beta", "gamma"], {"builtin": fixture_runs.ARMS}, "baseline", sweeps)
    for stem in stems:
        kind, *parts = stem.split("/")
        common = {"stats": stats, "out": out / stem, "runtime": runtime}
        if kind == "forest":
            plot_forest.run(**own_cells(common, cells, [parts[1]]), system=parts[0], arm=parts[1],
                            baseline_arm="baseline", splits={})
        elif kind == "sweep":
            grid = SWEEPS[parts[1]]
            plot_sweep.run(**own_cells(common, cells, [c["arm"] for c in grid["cells"]]), system=parts[0],
                           sweep_name=parts[1], grid=grid, baseline_arm="baseline")
        elif kind == "heatmap":
            plot_heatmap.run(**common)
    for system in MODELS:  # each system's rows, in one job
        plot_rows.run(stats=stats, out_dir=out, system=system, datasets=["alpha", "beta", "gamma"],
                      models=MODELS[system], runtime=runtime)
    plot_latency.run(times=[p.with_suffix(".times.json") for p in paths], stats=stats, out_dir=out, models=MODELS,
                     runtime=runtime)
    shown = plot_gallery.run(svgs=[out / f"{s}.svg" for s in stems], charts_dir=out, matrix=d / "m.json",
                             matrix_md=d / "m.md", out=out / "index.html")
    assert sorted(shown) == sorted(stems)
    return out, stems, sources.view(stats), runs


def test_row_charts_drawn_in_two_processes_are_the_ones_drawn_in_one(drawn, tmp_path, monkeypatch):
    out, _, _, _ = drawn
    # the runtime where the fixture's is, relative to the charts: the pages load it by the same path
    stats, runtime = [out.parent / "m.json"], tmp_path / "vega" / "vega-embed.js"
    # in a fresh process, as a job is: one that has drawn a chart (this one) draws the rest itself
    args = dict(stats=stats, out_dir=tmp_path, system="builtin", datasets=["alpha", "beta", "gamma"],
                models=MODELS["builtin"], runtime=runtime, workers=2)
    code = ("import json, sys; from pathlib import Path; from crmatrix.stages import plot_rows; "
            "a = json.loads(sys.argv[1]); a['stats'] = [Path(p) for p in a['stats']]; "
            "print(json.dumps([str(p) for p in plot_rows.run(**a)]))")
    done = subprocess.run([sys.executable, "-c", code, json.dumps(args, default=str)], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    written = [Path(p) for p in json.loads(done.stdout)]
    # every chart of the three datasets, in the datasets' order, each file the one-process job's bytes
    assert [p.relative_to(tmp_path).as_posix() for p in written] == [
        f"{kind}/builtin/{d}.{fmt}" for d in ("alpha", "beta", "gamma") for kind in ("arms", "transitions")
        for fmt in ("svg", "png", "html")]
    for p in written:
        assert p.read_bytes() == (out / p.relative_to(tmp_path)).read_bytes(), p
    # here, where the renderer has started, and for a lone dataset: no process of its own
    monkeypatch.setattr(plot_rows, "ProcessPoolExecutor", None)
    assert plot_rows.style.renderer_started()
    assert len(plot_rows.run(**{**args, "out_dir": tmp_path / "here"})) == 18
    assert len(plot_rows.run(**{**args, "out_dir": tmp_path / "one", "datasets": ["alpha"], "workers": 4})) == 6


def own_cells(common: dict, cells: list[Path], arms: list[str]) -> dict:
    """A chart job's arguments with, for the matrix, the cells of `arms` and the baseline's (as
    common.smk's `system_cells` hands them; the fixture's cells are `<dataset>.<arm>.cell.json`)."""
    keep = {"baseline", *arms}
    return {**{k: v for k, v in common.items() if k != "stats"},
            "cells": [c for c in cells if c.name.split(".")[1] in keep]}


# Grids over the fixture's arms, as crmatrix.config.sweeps.grids gives them: a 2 × 2 and a one-axis sweep.
SWEEPS = {
    "grid": {"axes": [{"var": "KNOB_A", "name": "a", "values": ["1", "2"]},
                      {"var": "KNOB_B", "name": "b", "values": ["x", "y"]}],
             "cells": [{"arm": "sparse", "values": ["1", "x"]}, {"arm": "stacked", "values": ["1", "y"]},
                       {"arm": "auto", "values": ["2", "x"]}, {"arm": "strict", "values": ["2", "y"]}]},
    "line": {"axes": [{"var": "KNOB_A", "name": "a", "values": ["1", "2"]}],
             "cells": [{"arm": "sparse", "values": ["1"]}, {"arm": "stacked", "values": ["2"]}]},
}


@pytest.mark.slow
def test_the_charts_are_the_ones_the_workflow_declares(drawn):
    _, stems, _, _ = drawn
    sweeps = {w: [c["arm"] for c in g["cells"]] for w, g in SWEEPS.items()}
    assert sorted(stems) == sorted(names.stems(["alpha", "beta", "gamma"], {"builtin": list(fixture_runs.ARMS)},
                                               "baseline", sweeps))
    assert {"sweep/builtin/grid", "sweep/builtin/line"} <= set(stems)
    # a system that takes part in no cell of a sweep gets no grid of it
    assert "sweep/peer/grid" not in names.stems(["alpha"], {"builtin": ["baseline"], "peer": ["baseline"]},
                                                "baseline", sweeps)


def test_a_sweep_grid_holds_each_cells_metric_and_delta_and_outlines_the_best(drawn):
    out, _, m, _ = drawn
    df = frames.sweep(m, SWEEPS["grid"], "builtin")
    gamma = {r.arm: r for r in df[df["row"] == "gamma (n 10)"].itertuples()}
    assert list(gamma) == ["sparse", "stacked", "auto", "strict"]
    assert (gamma["stacked"].x, gamma["stacked"].y) == ("1", "y")
    # mrr of stacked's ranks on gamma, 1 1 2 1 1 - 1 1 1 3: 47/60; of the baseline's, 1 2 - 3 5 - 1 4 2 -: 227/600
    assert gamma["stacked"].value == pytest.approx(47 / 60) and gamma["stacked"].text == "0.783"
    assert gamma["stacked"].delta_abs == pytest.approx(47 / 60 - 227 / 600)
    # stacked, auto and strict answer alike on gamma: all three tie for best
    assert [a for a, r in gamma.items() if r.best] == ["stacked", "auto", "strict"]
    assert gamma["auto"].identical_to == "stacked"
    line = frames.sweep(m, SWEEPS["line"], "builtin")
    assert set(line["y"]) == {""} and len(line) == 6
    spec = chart_spec(out / "sweep/builtin/grid.html")
    assert spec["title"]["text"] == "sweep grid · builtin: mrr of hybrid per cell (4 cells, 3 datasets)"
    assert spec["title"]["subtitle"][0] == "KNOB_A (a) × KNOB_B (b)"


def test_every_chart_is_saved_as_svg_png_and_a_page_loading_the_one_runtime(drawn):
    out, stems, _, _ = drawn
    for stem in stems:
        svg = ET.parse(out / f"{stem}.svg").getroot()
        assert svg.tag == "{http://www.w3.org/2000/svg}svg", stem
        assert len(svg.findall(".//{http://www.w3.org/2000/svg}path")) > 5, f"{stem}: nothing drawn"
        assert (out / f"{stem}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", stem
        page = out / f"{stem}.html"
        # one script from elsewhere: the shared runtime, by its path from the page (so the pages open offline)
        (src,) = re.findall(r'<script[^>]*\bsrc="([^"]+)"', page.read_text())
        assert (page.parent / src).resolve() == (out / "vega" / "vega-embed.js").resolve(), stem
        assert src == "../" * stem.count("/") + "vega/vega-embed.js", stem
        assert chart_spec(page)["$schema"].startswith("https://vega.github.io/schema/vega-lite/"), stem
        assert page.stat().st_size < 60_000, f"{stem}: {page.stat().st_size} bytes; is Vega inlined again?"


def test_each_png_is_the_one_vega_lite_renders_from_the_spec(drawn):
    """A PNG is rasterised from the chart's SVG (one rendering per chart): the same bytes as
    vl-convert's own Vega-Lite to PNG."""
    import vl_convert
    from altair.utils.html import vl_version_for_vl_convert

    out, stems, _, _ = drawn
    for stem in [s for s in stems if s.startswith(("arms/", "forest/", "heatmap", "latency"))]:
        spec = chart_spec(out / f"{stem}.html")
        png = vl_convert.vegalite_to_png(spec, vl_version=vl_version_for_vl_convert(), scale=style.PNG_SCALE)
        assert (out / f"{stem}.png").read_bytes() == png, stem


def test_a_chart_is_drawn_alike_each_time(drawn, tmp_path):
    out, _, m, _ = drawn
    cells = sorted(out.parent.glob("runs/*.cell.json"))
    again = plot_forest.run(**own_cells({}, cells, ["stacked"]), out=tmp_path / "forest/builtin/stacked",
                            system="builtin", arm="stacked", baseline_arm="baseline", splits={},
                            runtime=tmp_path / "vega" / "vega-embed.js")
    assert [p.name for p in again] == ["stacked.svg", "stacked.png", "stacked.html"]
    for path in again:
        assert path.read_bytes() == (out / "forest/builtin" / path.name).read_bytes(), path.name


def test_the_gallery_holds_every_chart_and_the_tables(drawn):
    out, stems, _, _ = drawn
    page = (out / "index.html").read_text()
    assert page.count("<svg") == len(stems)
    assert all(f'<figure id="{s}">' in page for s in stems)
    assert "<th>dataset</th>" in page and "≡ stacked" in page
    assert not re.search(r"<script[^>]*\bsrc=", page)
    assert page.count('<section id="power">') == 1  # the matrix's power block, above the charts


POWER = {"method": "paired sd of differences, normal approximation", "metric": "mrr", "alpha": 0.05,
         "target_power": 0.8, "moved_share": 0.1,
         "rows": [{"dataset": "alpha", "system": "builtin", "n": 10, "hypotheses": 3, "mde": 0.21, "mde_rel": 0.4}],
         "groups": [
             {"group": "python", "kind": "language", "system": "builtin", "datasets": 2, "queries": 18, "mde": 0.1234,
              "mde_arms": ["stacked", "auto"],
              "arms": {"stacked": {"delta": 0.081, "ci": [0.012, 0.15], "half_width": 0.069, "mde": 0.1234,
                                   "verdict": "positive", "moved": 10},
                       "sparse": {"delta": 0.004, "ci": [-0.02, 0.028], "half_width": 0.024, "mde": 0.01,
                                  "verdict": "flat", "moved": 1},
                       "auto": {"delta": 0.03, "ci": [-0.05, 0.11], "half_width": 0.08, "mde": 0.1234,
                                "verdict": "undecided", "moved": 4}}},
             {"group": "all datasets", "kind": "overall", "system": "peer", "datasets": 3, "queries": 28, "mde": None,
              "mde_arms": [],
              "arms": {"strict": {"delta": -0.06, "ci": [-0.1, -0.02], "half_width": 0.04, "mde": 0.057,
                                  "verdict": "negative", "moved": 2}}},
             {"group": "repoqa", "kind": "benchmark", "system": "builtin", "datasets": 1, "queries": 5, "mde": 0.3,
              "mde_arms": ["auto"],
              "arms": {"auto": {"delta": 0.0, "ci": [-0.2, 0.2], "half_width": 0.2, "mde": 0.3,
                                "verdict": "undecided", "moved": 1}}}]}


def test_the_gallery_says_what_the_matrix_can_tell_from_its_power_block(drawn, tmp_path):
    out, stems, _, _ = drawn
    m = json.loads((out.parent / "m.json").read_text())
    atomic.write_json(tmp_path / "m.json", {**m, "power": POWER})
    plot_gallery.run(svgs=[out / f"{s}.svg" for s in stems], charts_dir=out, matrix=tmp_path / "m.json",
                     matrix_md=out.parent / "m.md", out=tmp_path / "index.html")
    page = (tmp_path / "index.html").read_text()
    panel = page[page.index('<section id="power">'):page.index("</section>")]
    assert page.index('<section id="power">') < page.index("<h1>Charts</h1>")  # above everything
    assert "<h2>What this matrix can tell</h2>" in panel and "α 0.05 with 80% power" in panel
    assert "paired sd of differences, normal approximation" in panel and "moved at least 10 % of its" in panel
    rows = re.findall(r"<tr><td>(.*?)</td><td>(.*?)</td><td>(.*?)</td><td>(.*?)</td><td>(.*?)</td><td>(.*?)</td></tr>",
                      panel)
    # the group's MDE: the median over the arms that move a tenth of its queries, or why there is none
    assert [r[:5] for r in rows] == [("python <small>(language)</small>", "builtin", "2", "18", "±0.123 (2 of 3 arms)"),
                                     ("all datasets <small>(overall)</small>", "peer", "3", "28",
                                      "— (no arm moved 10 % of its queries)"),
                                     ("repoqa <small>(benchmark)</small>", "builtin", "1", "5", "±0.300 (1 of 1 arms)")]
    # the decided arms (by name), each with its verdict, Δ, interval, own MDE and share moved; then the undecided
    assert rows[0][5] == ('<span class="flat"><b>sparse</b> flat +0.004 [-0.020, +0.028] '
                          '<small>(MDE ±0.010, moved 6%)</small></span>; '
                          '<span class="positive"><b>stacked</b> positive +0.081 [+0.012, +0.150] '
                          '<small>(MDE ±0.123, moved 56%)</small></span> '
                          "<i>(undecided: auto <small>(MDE ±0.123, moved 22%)</small>)</i>")
    assert rows[1][5] == ('<span class="negative"><b>strict</b> negative -0.060 [-0.100, -0.020] '
                          '<small>(MDE ±0.057, moved 7%)</small></span>')
    assert rows[2][5] == "none <i>(undecided: auto <small>(MDE ±0.300, moved 20%)</small>)</i>"


def test_titles_name_dataset_metric_and_n_and_legends_the_model_by_its_config_name(drawn):
    out, _, m, _ = drawn
    spec = chart_spec(out / "arms/builtin/gamma.html")
    assert spec["title"]["text"] == "gamma · builtin: mrr of hybrid per arm (n = 10 queries)"
    models = {d["arm"]: d["model"] for d in chart_data(spec)}
    assert models == {**{a: "minilm" for a in fixture_runs.ARMS}, "strict": "minilm-int8"}
    quality = {(d["arm"], d["method"]): d["model"] for d in chart_data(chart_spec(out / "quality-latency.html"))}
    assert quality[("strict", "hybrid")] == "minilm-int8" and quality[("auto", "lexical")] == "minilm"
    # a system that embeds with no model says so
    assert frames.arms(sources.row(m, "gamma", "builtin"), ["baseline"], {})["model"].tolist() == [
        frames.NO_MODEL]
    forest_spec = chart_spec(out / "forest/builtin/stacked.html")
    assert forest_spec["title"]["subtitle"][0] == ("pooled +0.235 [-0.006, +0.476], I² 76%, τ² 0.0343; "
                                                   "2 positive / 1 negative / 0 inert")
    heat = chart_data(chart_spec(out / "heatmap.html"))
    assert {(c["row"], c["arm"]): c["text"] for c in heat}[("gamma · builtin (n 10)", "stacked")] == "+107%*"
    assert {(c["row"], c["arm"]): c["text"] for c in heat}[("gamma · builtin (n 10)", "auto")] == "≡ stacked"


def test_vega_lite_specs_are_valid_and_match_their_snapshots(drawn):
    out, stems, _, _ = drawn
    for stem in stems:
        spec = chart_spec(out / f"{stem}.html")
        alt.TopLevelSpec.validate(spec)  # the jobs leave validation to this test (crmatrix.plots.style.save)
        del spec["$schema"]  # the Vega-Lite version Altair writes, not an encoding
        got = json.dumps(spec, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
        snap = SNAPSHOTS / f"{stem}.vl.json"
        if os.environ.get("CRMATRIX_UPDATE_SNAPSHOTS") == "1":
            snap.parent.mkdir(parents=True, exist_ok=True)
            snap.write_text(got)
        assert snap.is_file(), f"{snap} missing: run with CRMATRIX_UPDATE_SNAPSHOTS=1 and review the diff"
        assert got == snap.read_text(), f"{stem}: the spec changed; if on purpose, CRMATRIX_UPDATE_SNAPSHOTS=1"


def test_the_statistics_must_be_a_phase_matrix_and_hold_the_chart(drawn, tmp_path):
    _, _, m, _ = drawn
    atomic.write_json(tmp_path / "runs.json", {"rows": []})
    with pytest.raises(CrmatrixError, match=r"runs.json: not a phase matrix \(no metric, baseline_arm, arms, "
                                            r"by_language, .*, pooled, power, benchmarks, test_ledger, statistics\)$"):
        sources.view([tmp_path / "runs.json"])
    with pytest.raises(CrmatrixError, match=r"m.json: no row of dataset 'delta' on system 'builtin'$"):
        arms.draw(m, system="builtin", dataset="delta", models={})
    with pytest.raises(CrmatrixError, match=r"m.json: no pooled entry of arm 'baseline' on system 'builtin'"):
        forest.draw(m, system="builtin", arm="baseline")
    with pytest.raises(CrmatrixError, match=r"expected the statistics in one phase matrix file, got 2 files"):
        sources.view([tmp_path / "runs.json"] * 2)


def test_runs_of_other_inputs_are_not_drawn_side_by_side(drawn):
    _, _, m, runs = drawn
    moved = [fixture_runs.typed(fixture_runs.run("gamma", "sparse", fixture_runs.RANKS["gamma"][1]["sparse"], "rust",
                                                 content_hash="another-commit"))
             if (r.dataset, r.arm) == ("gamma", "sparse") else r for r in runs]
    with pytest.raises(CrmatrixError, match=r"plots: dataset 'gamma': runs builtin/baseline and builtin/sparse were "
                                            r"made from different inputs \(.*content gamma-conten.* content "
                                            r"another-comm.*cannot be drawn side by side"):
        latency.draw([RunTimes.of(r) for r in moved], m, MODELS)
    other_file = [fixture_runs.typed(fixture_runs.run("alpha", "auto", fixture_runs.RANKS["alpha"][1]["auto"], "python",
                                                      dataset_sha="edited"))
                  if (r.dataset, r.arm) == ("alpha", "auto") else r for r in runs]
    with pytest.raises(CrmatrixError, match="dataset sha256 alpha-sha vs .* dataset sha256 edited"):
        latency.draw([RunTimes.of(r) for r in other_file], m, MODELS)


def test_a_forest_from_its_cells_is_the_forest_from_the_matrix(tmp_path):
    """Every forest of the varied matrix (a structural split, a second system) drawn from its arm's
    and the baseline's cells alone equals the one drawn from the phase matrix, but for the marks
    of an arm repeating another compared arm, which the cells leave to the matrix (cellview)."""
    runs = fixture_runs.varied_runs()
    paths = []
    for r in runs:
        paths.append(tmp_path / f"{r.dataset}.{r.system}.{r.arm}.json")
        r.write(paths[-1])
    cells = fixture_runs.cell_files(paths, "baseline", "hybrid", fixture_runs.FORMATS)
    m = matrix.build(runs, "baseline", "hybrid", fixture_runs.ARMS, splits=fixture_runs.SPLITS,
                     formats=fixture_runs.FORMATS)
    matrix.write(m, tmp_path / "m.json", tmp_path / "m.md")
    whole = sources.view([tmp_path / "m.json"])
    pairs = [(s, a) for s in ("builtin", "peer") for a in fixture_runs.ARMS[1:] if s == "builtin" or a == "stacked"]
    marks = set()
    for system, arm in pairs:
        own = [c for c in cells if c.name.split(".")[1] == system and c.name.split(".")[2] in ("baseline", arm)]
        from_cells = forest.draw(cellview.view(own, "baseline", [arm], fixture_runs.SPLITS), system=system,
                                 arm=arm).to_dict()
        from_matrix = json.dumps(forest.draw(whole, system=system, arm=arm).to_dict(), ensure_ascii=False)
        repeated = set(re.findall(r" \(≡ (\w+)\)", from_matrix)) - {"baseline"}
        marks |= repeated
        for other in repeated:
            from_matrix = from_matrix.replace(f" (≡ {other})", "")
        # Altair names each inline data set by a hash of its rows, which the labels are part of
        unnamed = [re.sub(r"data-[0-9a-f]{32}", "data", t) for t in (json.dumps(from_cells, ensure_ascii=False),
                                                                       from_matrix)]
        assert unnamed[0] == unnamed[1], (system, arm)
    assert marks == {"stacked"}  # auto and strict repeat stacked on some datasets: only the matrix says so
    auto = chart_data(forest.draw(cellview.view([c for c in cells if c.name.split(".")[1:3] in (
        ["builtin", "baseline"], ["builtin", "auto"])], "baseline", ["auto"], fixture_runs.SPLITS),
        system="builtin", arm="auto").to_dict())
    assert [d["label"] for d in auto if d["kind"] == "dataset"] == [
        "alpha (≡ baseline)", "beta (≡ baseline)", "gamma", "eta (≡ baseline)"]


def test_cells_handed_to_a_chart_must_be_cells_of_its_arms(drawn, tmp_path):
    out = drawn[0]
    cells = sorted(out.parent.glob("runs/*.cell.json"))
    atomic.write_json(tmp_path / "m.json", {"rows": []})
    with pytest.raises(CrmatrixError, match=r"m.json: not a cell's statistics \(no dataset, system, arm, "):
        cellview.view([tmp_path / "m.json"], "baseline", ["sparse"])
    with pytest.raises(CrmatrixError, match=r"alpha.auto.cell.json: a cell of arm 'auto', expected one of "
                                            r"baseline, sparse$"):
        cellview.view(cells, "baseline", ["sparse"])
    with pytest.raises(CrmatrixError, match="expected the statistics of at least one cell file, got none"):
        cellview.view([], "baseline", ["sparse"])


def test_model_costs_put_each_model_at_the_baseline_knobs_beside_what_its_indexes_cost(drawn):
    """One line per model and language: the baseline for its own model, `strict` (the baseline's
    knobs, another model) for minilm-int8 — not `sparse` or `stacked`, whose knobs differ; a
    system without a model of the config is its own embedder; throughput and size from each
    run's index record, over distinct corpora; an index embedded from the cache has no throughput."""
    _, _, view, _ = drawn
    runs = [{k: v for k, v in r.to_json().items() if k != "checksum"} for r in fixture_runs.runs()]  # edited below
    for r in runs:
        if r["arm"] in ("sparse", "stacked"):
            r["provenance"]["arm"]["env"] = {"CODELENS_RANK_SPARSE_TERM_WEIGHT": "1"}
    index = {"alpha": {"embedded": 100, "embed_seconds": 2.0, "bytes": 1000},
             "beta": {"embedded": 50, "embed_seconds": 0.5, "bytes": 500},
             "gamma": {"embedded": 0, "embed_seconds": 0.0, "bytes": 800}}
    for r in runs:
        if r["arm"] == "baseline":
            r["provenance"]["system_run"] = {"index_embedding": index[r["dataset"]]}
    peer = fixture_runs.run("alpha", "baseline", fixture_runs.RANKS["alpha"][1]["stacked"], "python", system="peer")
    peer["provenance"]["system_run"] = {"index_embedding": {"embedded": 30, "embed_seconds": 0.1, "bytes": 40}}
    alpha = next(r for r in view.rows if r.dataset == "alpha")
    peer_row = dataclasses.replace(alpha, system="peer", method="lexical")
    peer_view = dataclasses.replace(view, rows=(*view.rows, peer_row))
    df = frames.model_costs([RunTimes.of(fixture_runs.typed(r)) for r in [*runs, peer]], peer_view, MODELS)

    def mrr(dataset, arm, system="builtin", method="hybrid"):
        r = next(x for x in [*runs, peer] if (x["dataset"], x["arm"], x["system"]) == (dataset, arm, system))
        return r["methods"][method]["metrics"]["mrr"]

    got = {(x["model"], x["language"]): x for x in df.to_dict("records")}
    assert sorted(got) == [("minilm", "python"), ("minilm", "rust"), ("minilm-int8", "python"), ("minilm-int8", "rust"),
                           ("peer", "python")]
    assert got[("minilm", "python")] == {
        "model": "minilm", "language": "python", "system": "builtin", "arm": "baseline", "method": "hybrid",
        "value": (mrr("alpha", "baseline") + mrr("beta", "baseline")) / 2, "datasets": 2, "p50_ms": 15.0,
        "texts_per_s": 60.0, "embedded": 150, "index_mb": 0.0015}  # 150 texts in 2.5 s; 1500 bytes
    assert pd.isna(got[("minilm", "rust")]["texts_per_s"]) and got[("minilm", "rust")]["index_mb"] == 0.0008
    assert got[("minilm-int8", "python")]["arm"] == "strict" and pd.isna(got[("minilm-int8", "python")]["index_mb"])
    assert got[("minilm-int8", "python")]["value"] == (mrr("alpha", "strict") + mrr("beta", "strict")) / 2
    assert got[("peer", "python")]["method"] == "lexical" and got[("peer", "python")]["texts_per_s"] == 300.0
    assert got[("peer", "python")]["value"] == mrr("alpha", "baseline", "peer", "lexical")


def test_a_matrix_of_one_arm_draws_no_heatmap_nor_transitions_and_the_gallery_says_why(tmp_path):
    one = {"builtin": ["baseline"], "peer": ["baseline"]}
    assert names.stems(["a"], one, "baseline") == ["arms/builtin/a", "arms/peer/a", "latency", "models",
                                                   "quality-latency"]
    assert names.absent(one, "baseline") == [("heatmap, transitions and forests", "the matrix has one arm, baseline: "
                                              "no arm is compared with it, so there is no Δ to draw")]
    # a system that runs the baseline alone beside one that compares an arm: no transitions of its own
    mixed = {"builtin": ["baseline", "knob"], "peer": ["baseline"]}
    assert [s for s in names.stems(["a"], mixed, "baseline") if s.startswith(("transitions/", "heatmap"))] == [
        "transitions/builtin/a", "heatmap"]
    assert names.absent(mixed, "baseline") == [("transitions/peer/*", "peer runs the baseline arm alone: no arm to "
                                                                      "move its queries")]
    m = matrix.build([r for r in fixture_runs.runs() if r.arm == "baseline"], "baseline", "hybrid", ["baseline"])
    matrix.write(m, tmp_path / "m.json", tmp_path / "m.md")
    plot_gallery.run(svgs=[], charts_dir=tmp_path, matrix=tmp_path / "m.json", matrix_md=tmp_path / "m.md",
                     out=tmp_path / "index.html")
    page = (tmp_path / "index.html").read_text()
    assert ('<p class="absent">Not drawn: heatmap, transitions and forests — the matrix has one arm, baseline: no arm '
            "is compared with it, so there is no Δ to draw.</p>") in page
    panel = page[page.index('<section id="power">'):page.index("</section>", page.index('<section id="power">'))]
    assert "The matrix has one arm, `baseline`: no arm is compared with it" in panel and "<table>" not in panel
