"""The phase matrix as `collect_matrix` writes it from real runs (which method heads a row,
the cells whose arm was clamped or whose queries failed), and its statistics on a hand-made
matrix: identical arms, the correction family, detectable effects, pooling, roll-ups."""

import datetime as dt
import json
import math
import statistics
from dataclasses import replace
from pathlib import Path

import fixture_runs
import pytest

from crmatrix import atomic
from crmatrix.analysis import meta, stats
from crmatrix.analysis.matrix import assemble as matrix
from crmatrix.analysis.matrix import power
from crmatrix.config.settings import check_system
from crmatrix.datasets import ledger
from crmatrix.evaluation.cell import CellJob
from crmatrix.hits import Hit
from crmatrix.results.pool import Pooled
from crmatrix.results.run import Run
from crmatrix.stages import collect_matrix, evaluate_arm, extract_symbols, fetch_corpus, prepare_dataset
from crmatrix.systems import registry as systems

SOURCE = ("def slugify(title):\n    return title.lower()\n\n\n"
          "class Cache:\n    def get(self, key):\n        return self.items[key]\n")
DATASET = [
    {"query": "slugify", "expected_symbol": "slugify", "expected_file_suffix": "lib/util.py"},
    {"query": "cache get", "expected_symbol": "get", "expected_file_suffix": "lib/util.py"},
    {"query": "Cache", "expected_symbol": "Cache", "expected_file_suffix": "lib/util.py"},
]


class NameLookup(systems.System):
    """A third-party system: a hit for the symbol named exactly like the query, under two
    methods listed out of alphabetical order; a query holding a space makes it raise."""

    METHODS = ("first", "exact")

    def __init__(self, ctx):
        super().__init__(ctx)
        self.symbols = ctx.symbols

    def search(self, query, method, k):
        if " " in query:
            raise RuntimeError("cannot parse a query with spaces")
        return [Hit(s.path, s.name, s.kind, s.start_line, s.end_line, 1.0) for s in self.symbols if s.name == query]


@pytest.fixture
def stage(tmp_path, monkeypatch):
    """Runs the stages a user's matrix runs, up to one run per (system, arm)."""
    monkeypatch.setitem(systems.TYPES.own, "lookup", NameLookup)
    src = tmp_path / "proj"
    (src / "lib").mkdir(parents=True)
    (src / "lib" / "util.py").write_text(SOURCE)
    (tmp_path / "ds.json").write_text(json.dumps(DATASET))
    r = tmp_path / "results"
    fetch_corpus.run("proj", {"path": str(src)}, r / "tree", r / "manifest.json", [], {})
    extract_symbols.run(r / "tree", r / "manifest.json", r / "symbols.jsonl")
    prepare_dataset.run(tmp_path / "ds.json", "codelens", "proj", r / "manifest.json", r / "symbols.jsonl",
                        r / "tasks.jsonl")

    def run(system: str, conf: dict, arm: str, env: dict):
        conf = check_system(system, conf)
        out = r / "runs" / system / f"{arm}.json"
        inputs = {"tasks": r / "tasks.jsonl", "symbols": r / "symbols.jsonl", "manifest": r / "manifest.json",
                  "tree": r / "tree", "dataset_file": tmp_path / "ds.json"}
        evaluate_arm.run(CellJob("ds", system, arm, inputs, {"system_conf": conf, "env": env, "top_k": 10},
                              {"run": out}))
        return out

    def collect(runs):
        cells = fixture_runs.cell_files(runs, "baseline", "hybrid")
        m = collect_matrix.run(cells, "baseline", "hybrid", ["baseline", "wide"], {}, r / "m.json", r / "m.md")
        assert json.loads((r / "m.json").read_text()) == json.loads(json.dumps(m.to_json()))
        return m.to_json(), (r / "m.md").read_text().splitlines()

    return run, collect


def table_row(md_lines, system):
    return next(line for line in md_lines if line.startswith(f"| ds | {system} |"))


def test_a_clamped_arm_is_flagged_and_the_headline_is_the_first_listed_method(stage):
    run, collect = stage
    conf = {"type": "builtin", "methods": ["lexical", "bm25"]}  # no hybrid; bm25 sorts first in the run JSON
    runs = [run("builtin", dict(conf), "baseline", {}),
            run("builtin", dict(conf), "wide", {"CODELENS_RANK_SPARSE_TERM_WEIGHT": "1",
                                                "CODELENS_RANK_SPARSE_THRESHOLD": "500"})]
    assert list(json.loads(runs[0].read_text())["methods"]) == ["bm25", "lexical"]
    m, md = collect(runs)
    (row,) = m["rows"]
    assert row["method"] == "lexical"
    assert (row["cells"]["baseline"]["clamped"], row["cells"]["baseline"]["failed"]) == ([], 0)
    assert row["cells"]["wide"]["clamped"] == ["CODELENS_RANK_SPARSE_THRESHOLD=500 clamped to 90"]
    assert row["cells"]["wide"]["failed"] == 0
    assert table_row(md, "builtin") == (
        "| ds | builtin | lexical | python | 3 | — | 1.000 [1.00, 1.00] | 1.000 [1.00, 1.00]"
        "<br>≡ baseline<br>⚠ clamped |")


def test_failed_queries_are_counted_in_the_cell(stage):
    run, collect = stage
    runs = [run("lookup", {"type": "lookup"}, arm, {}) for arm in ("baseline", "wide")]
    m, md = collect(runs)
    (row,) = m["rows"]
    assert row["method"] == "first"  # the system's first method, not the alphabetical "exact"
    assert {arm: (c["failed"], c["clamped"]) for arm, c in row["cells"].items()} == {
        "baseline": (1, []), "wide": (1, [])}
    assert table_row(md, "lookup") == (
        "| ds | lookup | first | python | 3 | — | 0.667 [0.00, 1.00]<br>⚠ 1 failed (1 crash) | 0.667 [0.00, 1.00]"
        "<br>≡ baseline<br>⚠ 1 failed (1 crash) |")


# --- statistics on a hand-made matrix (tests/fixture_runs.py) -------------------------------



def build(**kw):
    return matrix.build(fixture_runs.runs(), "baseline", "hybrid", fixture_runs.ARMS, **kw)


def row_of(m, dataset):
    """The row's JSON, as phase-matrix.json holds it."""
    return next(r for r in m.to_json()["rows"] if r["dataset"] == dataset)


def test_identical_arms_are_one_hypothesis_and_a_copy_of_the_baseline_none():
    m = build()
    gamma = row_of(m, "gamma")["cells"]
    assert {a: c["identical_to"] for a, c in gamma.items()} == {
        "baseline": None, "sparse": None, "stacked": None, "auto": "stacked", "strict": "stacked"}
    assert {a: c["identical_to"] for a, c in row_of(m, "alpha")["cells"].items()}["auto"] == "baseline"
    assert row_of(m, "gamma")["family"] == row_of(m, "alpha")["family"] == ["sparse", "stacked"]
    # exact sign-flip p: stacked moves 7 queries up (2 of 2^7 assignments reach it), sparse 2 (2 of 4)
    assert (gamma["stacked"]["p_randomization"], gamma["sparse"]["p_randomization"]) == (1 / 64, 0.5)
    # Holm over every arm would count stacked three times: 4 * 1/64 = 0.0625, not significant
    assert stats.holm([0.5, 1 / 64, 1 / 64, 1 / 64]) == [0.5, 0.0625, 0.0625, 0.0625]
    # one hypothesis: 2 * 1/64, significant, and its twins carry the same corrected p
    assert [gamma[a]["p_holm"] for a in ("sparse", "stacked", "auto", "strict")] == [0.5, 1 / 32, 1 / 32, 1 / 32]
    alpha = row_of(m, "alpha")["cells"]
    assert (alpha["auto"]["p_holm"], alpha["stacked"]["p_holm"], alpha["strict"]["p_holm"]) == (1.0, 1 / 16, 1 / 16)
    md = matrix.to_markdown(m).splitlines()
    assert next(line for line in md if line.startswith("| gamma |")) == (
        "| gamma | builtin | hybrid | rust | 10 | ±0.274 (73%) | 0.378 [0.18, 0.61] | 0.495 [0.24, 0.75]"
        "<br>Δ +0.117 +30.8% strong<br>p=0.500 (0.500 unadj.) ↑2 ↓0<br>needs ≈44 queries | 0.783 [0.53, 0.95]"
        "<br>Δ +0.405 +107.0% strong*<br>p=0.031 (0.016 unadj.) ↑7 ↓0 | 0.783 [0.53, 0.95]<br>≡ stacked | "
        "0.783 [0.53, 0.95]<br>≡ stacked |")
    assert "| auto | 1 | 0 | 1 | alpha ≡ baseline; beta ≡ baseline; gamma ≡ stacked |" in md


def test_a_dataset_note_rides_with_its_name_in_every_table_and_chart():
    """An oracle run's caveat (config `note`) is on its row, and beside its name wherever the
    matrix shows it: its own row, the knob table, the forest and heatmap labels, a chart title."""
    from crmatrix.plots import frames, sources

    note = "oracle: the gold docs only — not comparable to the benchmark"
    m = build(notes={"gamma": note, "alpha": ""})
    assert m.notes == {"gamma": note}
    assert (row_of(m, "gamma")["note"], "note" in row_of(m, "alpha")) == (note, False)
    assert "notes" not in build().to_json()
    md = matrix.to_markdown(m).splitlines()
    assert next(line for line in md if line.startswith("| gamma")).startswith(f"| gamma ({note}) | builtin | hybrid |")
    assert "| auto | 1 | 0 | 1 | alpha ≡ baseline; beta ≡ baseline; gamma (" + note + ") ≡ stacked |" in md
    assert not [line for line in md if "| gamma |" in line or " gamma ≡" in line]
    assert f"gamma ({note}) · builtin (n 10)" in set(frames.heatmap(sources.of_matrix(m, "m"))["row"])
    pool = next(e for e in m.pooled if e.arm == "stacked")
    assert f"gamma ({note})" in set(frames.forest(pool, m.notes)["label"])
    assert "gamma" in set(frames.forest(pool, {})["label"])  # a pool read without the notes names it bare


def test_comparisons_narrow_the_family():
    m = build(comparisons=["stacked"])
    gamma = row_of(m, "gamma")
    assert gamma["family"] == ["stacked"]
    assert (gamma["cells"]["stacked"]["p_holm"], gamma["cells"]["auto"]["p_holm"]) == (1 / 64, 1 / 64)
    assert gamma["cells"]["sparse"]["p_holm"] is None and gamma["cells"]["sparse"]["p_randomization"] == 0.5
    assert "p=0.500 unadjusted (not in the family) ↑2 ↓0" in matrix.to_markdown(m)
    # an arm named alone that repeats another brings that arm's hypothesis into the family
    assert row_of(build(comparisons=["strict"]), "gamma")["family"] == ["stacked"]


def test_each_row_states_its_detectable_effect():
    gamma = row_of(build(), "gamma")
    stacked = [0, 1 / 2, 1 / 2, 2 / 3, 4 / 5, 0, 0, 3 / 4, 1 / 2, 1 / 3]  # per-query Δ of reciprocal rank
    sparse = [0, 0, 0, 2 / 3, 0, 0, 0, 0, 1 / 2, 0]
    assert gamma["cells"]["stacked"]["sd_diff"] == pytest.approx(statistics.stdev(stacked))
    sd = math.sqrt((statistics.stdev(stacked) ** 2 + statistics.stdev(sparse) ** 2) / 2)
    # two hypotheses: alpha 0.05 / 2, z(0.9875) + z(0.8) = 2.241403 + 0.841621
    d = gamma["detectable"]
    assert (d["alpha"], d["power"], d["n"]) == (0.025, 0.8, 10)
    assert d["sd_diff"] == pytest.approx(sd)
    assert d["abs"] == pytest.approx(3.083024 * sd / math.sqrt(10), abs=1e-6)
    assert d["rel"] == pytest.approx(d["abs"] / gamma["cells"]["baseline"]["mrr"])
    # sparse's Δ 0.1167 with its own spread needs (3.083024 * 0.249072 / 0.116667)^2 = 43.3 -> 44 queries
    assert gamma["cells"]["sparse"]["queries_needed"] == 44
    assert gamma["cells"]["auto"]["queries_needed"] == 6  # stacked's twin
    assert row_of(build(), "alpha")["cells"]["auto"]["queries_needed"] is None  # ≡ baseline: nothing to detect


def test_pooled_per_language_and_overall_with_verdicts():
    m = build()
    pooled = m.to_json()["pooled"]
    auto = next(e for e in pooled if e["arm"] == "auto")
    groups = {g["group"]: g for g in auto["groups"]}
    assert list(groups) == ["python", "rust", "all datasets"]
    # auto is the baseline on both Python datasets: no per-query spread, counted inert, not pooled
    assert groups["python"]["unvaried"] == ["alpha", "beta"] and groups["python"]["pooled"] is None
    assert groups["all datasets"]["verdict"] == {"positive": 1, "negative": 0, "inert": 2}
    gamma = next(s for s in auto["studies"] if s["dataset"] == "gamma")
    assert gamma["se"] == pytest.approx(row_of(m, "gamma")["cells"]["auto"]["sd_diff"] / math.sqrt(10))
    assert groups["all datasets"]["pooled"]["estimate"] == pytest.approx(0.405) and \
        groups["all datasets"]["pooled"]["k"] == 1
    stacked = {g["group"]: g for g in next(e for e in pooled if e["arm"] == "stacked")["groups"]}
    assert stacked["all datasets"]["verdict"] == {"positive": 2, "negative": 1, "inert": 0}
    assert stacked["all datasets"]["pooled"]["k"] == 3
    assert sum(stacked["all datasets"]["pooled"]["weights"].values()) == pytest.approx(1.0)


def test_rollups_count_datasets_in_words():
    md = matrix.to_markdown(build())
    assert ("| python | builtin | alpha, beta | 0.573 | 0.675 (Δ +0.102; 2 datasets better, 0 worse) | "
            "0.709 (Δ +0.137; 1 dataset better, 1 worse) |") in md
    assert "↑" not in md.split("## By language")[1].split("## One knob")[0]


def test_the_matrix_is_the_same_bytes_every_time(tmp_path):
    for name in ("a", "b"):
        matrix.write(build(), tmp_path / f"{name}.json", tmp_path / f"{name}.md")
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()


def test_an_arm_that_moves_no_query_is_no_hypothesis():
    """Other answers (a top candidate changed) but not one rank moved: not ≡, yet nothing to test."""
    runs = fixture_runs.run_docs()
    still = next(r for r in runs if (r["dataset"], r["arm"]) == ("gamma", "sparse"))
    base = next(r for r in runs if (r["dataset"], r["arm"]) == ("gamma", "baseline"))
    still["methods"] = json.loads(json.dumps(base["methods"]))
    still["methods"]["hybrid"]["queries"][0]["top_candidate"] = {"path": "elsewhere.rs", "symbol": "other"}
    m = matrix.build([fixture_runs.typed(r) for r in runs], "baseline", "hybrid", fixture_runs.ARMS)
    gamma = row_of(m, "gamma")
    assert gamma["cells"]["sparse"]["identical_to"] is None
    assert gamma["family"] == ["stacked"]  # one hypothesis left: 1/64 is not multiplied at all
    assert (gamma["cells"]["sparse"]["p_holm"], gamma["cells"]["stacked"]["p_holm"]) == (1.0, 1 / 64)
    assert gamma["detectable"]["alpha"] == 0.05
    line = next(x for x in matrix.to_markdown(m).splitlines() if x.startswith("| gamma |"))
    assert "| 0.378 [0.18, 0.61]<br>Δ +0.000 +0.0% flat<br>no query moved |" in line


# --- the whole matrix, byte for byte ----------------------------------------------------------

SNAPSHOT = Path(__file__).parent / "snapshots" / "matrix"
ARCHETYPES = {"alpha": "library", "beta": "library", "gamma": "cli"}
SUMMARIES = {"alpha": {"tasks": 10, "dropped": 2, "dropped_by_reason": {"cites no file of the tree": 2}},
             "gamma": {"tasks": 10, "dropped": 0, "dropped_by_reason": {}}}


def varied_matrix(tmp_path) -> tuple[Path, Path]:
    """The phase matrix of fixture_runs.varied_runs() as the workflow writes it from the run
    files (a cell_stats job per run, then collect_matrix), its test-split runs already in the
    ledger (so that no date of today enters it)."""
    paths = []
    for r in fixture_runs.varied_run_docs():
        paths.append(fixture_runs.write(tmp_path / "runs" / r["dataset"] / r["system"] / f"{r['arm']}.json", r))
    book = ledger.read(tmp_path / "ledger.json")
    ledger.add(book, [s for p in paths if (s := ledger.scoring(Run.read(p), atomic.sha256_file(p)))],
               dt.date(2026, 12, 1))
    ledger.write(book, tmp_path / "ledger.json")
    summaries = {}
    for d, summary in SUMMARIES.items():
        summaries[d] = tmp_path / f"{d}.summary.json"
        atomic.write_json(summaries[d], summary)
    out = (tmp_path / "phase-matrix.json", tmp_path / "phase-matrix.md")
    cells = fixture_runs.cell_files(paths, "baseline", "hybrid", fixture_runs.FORMATS)
    collect_matrix.run(cells, "baseline", "hybrid", fixture_runs.ARMS, ARCHETYPES, *out, fixture_runs.SPLITS,
                       ledger_path=tmp_path / "ledger.json", summaries=summaries, reference="builtin")
    return out


# The parts that came after the snapshot: their JSON keys, and their sections of the Markdown.
ADDED_KEYS = ("power", "arm_ranks", "leaderboard")
ADDED_SECTIONS = ("\n## Leaderboard: systems compared\n", "\n## Arms ranked across all datasets\n",
                  "\n## What this matrix can tell\n", "\n## Public benchmarks: every method\n")


def without_testable(got: dict) -> dict:
    """The matrix without the fields added after the snapshot inside parts it has: the fewest
    queries the paired test can judge, and whether it judges each compared cell (every one here)."""
    assert got["statistics"].pop("min_queries") == 6
    compared = [c for r in got["rows"] for c in r["cells"].values() if "p_holm" in c]
    assert compared and [c.pop("testable") for c in compared] == [True] * len(compared)
    return got


def without_methods(got: dict) -> dict[tuple[str, str], dict]:
    """Every method of each public benchmark's entry (added after the snapshot), taken out of `got`."""
    return {(b["dataset"], b["system"]): {"method_metrics": b.pop("method_metrics"), "methods": b.pop("methods")}
            for b in got["benchmarks"]}


def section(md: str, head: str) -> str:
    start = md.index(head)
    return md[start:md.index("\n## ", start + len(head))]


def test_the_varied_matrix_is_the_snapshot_and_what_it_can_tell(tmp_path):
    """The snapshot was written by the all-in-one collect_matrix (every statistic from the runs in
    one job, commit 9ffc78b) before the statistics per cell became jobs of their own: the cells
    assembled give the same bytes, the parts that came after aside (the power block, the
    leaderboard of its two systems, its arms ranked) and their sections."""
    got_json, got_md = varied_matrix(tmp_path)
    got = json.loads(got_json.read_text())
    added = {k: got.pop(k) for k in ADDED_KEYS}
    methods = without_methods(got)
    before = tmp_path / "before.json"
    atomic.write_json(before, without_testable(got))
    assert before.read_bytes() == (SNAPSHOT / "phase-matrix.json").read_bytes()
    md = got_md.read_text()
    sections = {head: section(md, head) for head in ADDED_SECTIONS}
    for text in sections.values():
        md = md.replace(text, "")
    assert md.encode() == (SNAPSHOT / "phase-matrix.md").read_bytes()
    # what the power section adds: a line per pooled group (two systems; builtin's alpha and beta are SWE-QA)
    power = added["power"]
    assert [(g["system"], g["kind"], g["group"]) for g in power["groups"]] == [
        ("builtin", "language", "python"), ("builtin", "language", "rust"), ("builtin", "benchmark", "swe-qa"),
        ("builtin", "overall", "all datasets"), ("peer", "language", "python"), ("peer", "overall", "all datasets")]
    power_md = sections[ADDED_SECTIONS[2]]
    assert power_md.count("\n| builtin | ") == 4 and power_md.count("\n| peer | ") == 2
    # the leaderboard of builtin (the reference) and peer, and each system's arms ranked
    assert [s["system"] for s in added["leaderboard"]["standings"]] == ["builtin", "peer"]
    assert [r["system"] for r in added["arm_ranks"]] == ["builtin", "peer"]
    assert "| builtin › peer | 1 | 10 |" in sections[ADDED_SECTIONS[0]]
    # every method of each benchmark's system, per arm: the headline's as its own table has it, the MRR beside
    assert sorted(methods) == [("alpha", "builtin"), ("alpha", "peer"), ("beta", "builtin"), ("gamma", "builtin")]
    alpha = methods[("alpha", "builtin")]
    assert alpha["method_metrics"] == ["recall@5", "recall@10", "ndcg@10", "mrr"]
    assert sorted(alpha["methods"]) == sorted(fixture_runs.ARMS)
    base = alpha["methods"]["baseline"]
    assert sorted(base) == ["hybrid", "lexical"]
    entry = next(b for b in json.loads(got_json.read_text())["benchmarks"] if b["dataset"] == "alpha")
    assert {m: base["hybrid"]["scores"][m] for m in entry["metrics"]} == entry["arms"]["baseline"]
    row = next(r for r in got["rows"] if (r["dataset"], r["system"]) == ("alpha", "builtin"))
    assert base["hybrid"]["scores"]["mrr"]["mean"] == row["cells"]["baseline"]["mrr"]
    assert base["lexical"]["scores"]["mrr"]["mean"] < row["cells"]["baseline"]["mrr"]  # one rank worse
    assert sorted(base["hybrid"]["strata"]) == sorted(entry["strata"]["baseline"])
    assert list(methods[("alpha", "peer")]["methods"]["baseline"]) == ["lexical"]
    gamma = methods[("gamma", "builtin")]
    assert gamma["method_metrics"] == ["pass@1", "recall@5", "recall@10", "ndcg@10", "mrr"]
    assert sorted(gamma["methods"]["baseline"]) == ["hybrid", "lexical", "semantic"]
    every = sections[ADDED_SECTIONS[3]]
    assert "\n**alpha · builtin** (swe-qa, baseline)\n" in every
    assert every.count("| hybrid (headline) | ") == 3 and "\n| lexical | " in every


# --- what the matrix can tell (the power block) -----------------------------------------------

Z95, Z80 = 1.959964, 0.841621  # z(0.975), z(0.8)


@pytest.mark.parametrize("low, high, flat, verdict", [
    (0.02, 0.05, 0.01, "positive"), (0.01, 0.05, 0.01, "positive"),  # the band is |Δ| < flat: its edge is out
    (-0.05, -0.02, 0.01, "negative"), (-0.005, 0.008, 0.01, "flat"),
    (0.005, 0.05, 0.01, "undecided"), (-0.02, 0.02, 0.01, "undecided"), (-0.02, 0.005, 0.01, "undecided"),
    (0.0, 0.1, 0.0, "undecided"), (0.001, 0.1, 0.0, "positive"),  # a baseline of 0: no band, but zero stays out
])
def test_a_pooled_verdict_is_called_only_beyond_or_within_the_flat_band(low, high, flat, verdict):
    assert power.verdict(low, high, flat) == verdict


def test_a_pooled_arm_states_its_interval_half_width_and_detectable_effect():
    # two datasets with Δ 0.1 and standard error 0.05 each: no heterogeneity, SE 0.05 / √2
    pooled = Pooled(**{**meta.random_effects([0.1, 0.1], [0.05 ** 2, 0.05 ** 2]), "weights": {"a": 0.5, "b": 0.5}})
    se = 0.05 / math.sqrt(2)
    got = power.judge(pooled, {"a": 0.5, "b": 0.7}, 3).to_json()  # the band: 1 % of 0.6
    assert got["delta"] == pytest.approx(0.1) and got["moved"] == 3
    assert got["ci"] == pytest.approx([0.1 - Z95 * se, 0.1 + Z95 * se], abs=1e-6)
    assert got["half_width"] == pytest.approx(Z95 * se, abs=1e-6) == pytest.approx(0.069295, abs=1e-6)
    assert got["mde"] == pytest.approx((Z95 + Z80) * se, abs=1e-6) == pytest.approx(0.099051, abs=1e-6)
    assert got["verdict"] == "positive"
    assert power.judge(pooled, {"a": 8.0, "b": 9.0}, 3).verdict == "undecided"  # the band is ±0.085 now


def test_power_per_row_and_per_group_on_a_hand_computed_matrix():
    """Two SWE-QA datasets of four queries, each at rank 2 under the baseline (MRR 0.5): `lift`
    brings two queries to rank 1 (differences 0.5, 0.5, 0, 0), `half` one (0.5, 0, 0, 0)."""
    ranks = {"baseline": [2, 2, 2, 2], "lift": [1, 1, 2, 2], "half": [1, 2, 2, 2]}
    runs = [fixture_runs.typed(fixture_runs.run(d, arm, r, "python")) for d in ("d1", "d2") for arm, r in ranks.items()]
    swe_qa = fixture_runs.facts("swe-qa")
    m = matrix.build(runs, "baseline", "hybrid", list(ranks), formats={"d1": swe_qa, "d2": swe_qa})
    p = m.to_json()["power"]
    assert (p["method"], p["metric"], p["alpha"], p["target_power"]) == ("hybrid", "mrr", 0.05, 0.8)
    # per row: two hypotheses at 0.05 / 2, the family's sd √((1/12 + 1/16) / 2), n 4
    z2 = 2.241403 + Z80
    sd_lift, sd_half = math.sqrt(1 / 12), 0.25  # sample sds of (.5, .5, 0, 0) and (.5, 0, 0, 0)
    row_mde = z2 * math.sqrt((sd_lift ** 2 + sd_half ** 2) / 2) / 2
    assert [(r["dataset"], r["n"], r["hypotheses"]) for r in p["rows"]] == [("d1", 4, 2), ("d2", 4, 2)]
    assert p["rows"][0]["mde"] == pytest.approx(row_mde, abs=1e-6) == pytest.approx(0.416256, abs=1e-6)
    assert p["rows"][0]["mde_rel"] == pytest.approx(row_mde / 0.5, abs=1e-6)
    # per group: the same two datasets as a language, as a benchmark and overall
    assert [(g["kind"], g["group"], g["datasets"], g["queries"]) for g in p["groups"]] == [
        ("language", "python", 2, 8), ("benchmark", "swe-qa", 2, 8), ("overall", "all datasets", 2, 8)]
    assert p["groups"][0]["arms"] == p["groups"][1]["arms"] == p["groups"][2]["arms"]
    lift, half = p["groups"][1]["arms"]["lift"], p["groups"][1]["arms"]["half"]
    se_lift, se_half = sd_lift / 2 / math.sqrt(2), sd_half / 2 / math.sqrt(2)  # sd/√n per dataset, two alike
    assert (lift["delta"], half["delta"]) == (pytest.approx(0.25), pytest.approx(0.125))
    assert lift["ci"] == pytest.approx([0.049962, 0.450038], abs=1e-6)
    assert (lift["half_width"], half["half_width"]) == (pytest.approx(Z95 * se_lift, abs=1e-6),
                                                        pytest.approx(Z95 * se_half, abs=1e-6))
    assert (lift["verdict"], half["verdict"]) == ("positive", "undecided")  # half's interval reaches below 0
    assert (lift["mde"], half["mde"]) == (pytest.approx((Z95 + Z80) * se_lift, abs=1e-6),
                                          pytest.approx((Z95 + Z80) * se_half, abs=1e-6))
    assert (lift["moved"], half["moved"], p["moved_share"]) == (4, 2, 0.1)  # of the group's 8 queries
    assert p["groups"][1]["mde_arms"] == ["lift", "half"]  # both move 10 % of the queries or more
    assert (lift["mde"], half["mde"]) == (pytest.approx(0.285936, abs=1e-6), pytest.approx(0.247627, abs=1e-6))
    assert p["groups"][1]["mde"] == pytest.approx((lift["mde"] + half["mde"]) / 2)  # the median of two
    assert p["groups"][1]["mde"] == pytest.approx(0.266781, abs=1e-6)
    md = matrix.to_markdown(m)
    assert ("| builtin | swe-qa | benchmark | 2 | 8 | ±0.267 (2 of 2 arms) | lift positive +0.250 [+0.050, +0.450] "
            "(MDE ±0.286, moved 50%) | half (MDE ±0.248, moved 25%) |" in md.split("## What this matrix can tell")[1])


def lift_and_tiny() -> list:
    """Two datasets of ten queries at rank 2: `lift` brings five of each to rank 1, `tiny` one of d1's."""
    ten = [2] * 10
    ranks = {"d1": {"baseline": ten, "lift": [1] * 5 + [2] * 5, "tiny": [1] + [2] * 9},
             "d2": {"baseline": ten, "lift": [1] * 5 + [2] * 5, "tiny": ten}}
    return [fixture_runs.typed(fixture_runs.run(d, arm, r, "python"))
            for d, by in ranks.items() for arm, r in by.items()]


def test_the_group_mde_counts_only_the_arms_that_move_a_tenth_of_its_queries():
    """Two datasets of ten queries at rank 2 (MRR 0.5): `lift` brings five of each to rank 1
    (differences 0.5 × 5, 0 × 5: sd √(10 · 0.25² / 9) = 0.263523, SE per dataset 0.083333,
    pooled 0.058926, MDE 2.801585 · SE = 0.165085), `tiny` one query of d1 (a 0.5 among nine 0s:
    sd 0.158114, SE 0.05, MDE 0.140079; d2 answers as the baseline: not pooled). tiny moves 1 of
    20 queries, under a tenth: the group's MDE is lift's, not the median 0.152582 of both."""
    runs = lift_and_tiny()
    m = matrix.build(runs, "baseline", "hybrid", ["baseline", "lift", "tiny"])
    overall = m.power.groups[-1]
    assert (overall.group, overall.queries) == ("all datasets", 20)
    assert (overall.arms["lift"].moved, overall.arms["tiny"].moved) == (10, 1)
    assert overall.arms["lift"].mde == pytest.approx(0.165085, abs=1e-6)
    assert overall.arms["tiny"].mde == pytest.approx(0.140079, abs=1e-6)
    assert (overall.mde, overall.mde_arms) == (overall.arms["lift"].mde, ("lift",))
    md = matrix.to_markdown(m).split("## What this matrix can tell")[1]
    assert ("| builtin | all datasets | overall | 2 | 20 | ±0.165 (1 of 2 arms) | lift positive +0.250 "
            "[+0.135, +0.365] (MDE ±0.165, moved 50%) | tiny (MDE ±0.140, moved 5%) |") in md
    # without lift, no arm moves a tenth of the queries: the group has no MDE, and says why
    alone = matrix.build([r for r in runs if r.arm != "lift"], "baseline", "hybrid", ["baseline", "tiny"])
    assert (alone.power.groups[-1].mde, alone.power.groups[-1].mde_arms) == (None, ())
    assert "| 2 | 20 | — (no arm moved 10 % of its queries) | — | tiny (MDE ±0.140, moved 5%) |" in \
        matrix.to_markdown(alone)


def test_a_benchmark_pools_only_from_two_datasets():
    runs = [fixture_runs.typed(fixture_runs.run(d, arm, r, "python")) for d in ("d1", "d2") for arm, r in
            {"baseline": [2, 2, 2, 2], "lift": [1, 1, 2, 2]}.items()]
    facts = fixture_runs.facts
    m = matrix.build(runs, "baseline", "hybrid", formats={"d1": facts("swe-qa"), "d2": facts("repoqa")})
    assert [g.kind for g in m.power.groups] == ["language", "overall"]
    hand_built = matrix.build(runs, "baseline", "hybrid", formats={"d1": facts("codelens"), "d2": facts("codelens")})
    assert [g.kind for g in hand_built.power.groups] == ["language", "overall"]


def test_a_flat_change_asks_for_no_queries():
    """gamma's `sparse` moves one query from rank 5 to 6: Δ (1/6 − 1/5) / 10 = −0.0033, under 1 % of
    the baseline's 0.378. Detecting it would need (3.083 · 0.0105 / 0.0033)² ≈ 96 queries; a flat
    Δ is no effect, so the cell says nothing of it (a Δ of rounding noise asked for millions)."""
    docs = fixture_runs.run_docs()
    sparse = next(r for r in docs if (r["dataset"], r["arm"]) == ("gamma", "sparse"))
    ranks = list(fixture_runs.RANKS["gamma"][1]["baseline"])
    ranks[4] = 6
    sparse["methods"] = fixture_runs.run("gamma", "sparse", ranks, "rust")["methods"]
    runs = [fixture_runs.typed(r) for r in docs]
    cell = row_of(matrix.build(runs, "baseline", "hybrid", fixture_runs.ARMS), "gamma")["cells"]["sparse"]
    assert (cell["band"], cell["regressed"], cell["queries_needed"]) == ("flat", 1, None)
    assert cell["delta_abs"] == pytest.approx((1 / 6 - 1 / 5) / 10)
    assert stats.queries_needed(cell["sd_diff"], cell["delta_abs"], 0.025) == 96  # what it used to print
    line = next(x for x in matrix.to_markdown(matrix.build(runs, "baseline", "hybrid", fixture_runs.ARMS))
                .splitlines() if x.startswith("| gamma |"))
    assert "| 0.375 [0.17, 0.61]<br>Δ -0.003 -0.9% flat<br>p=1.000 (1.000 unadj.) ↑0 ↓1 |" in line


# --- arms ranked, and a matrix of one arm ------------------------------------------------------

def test_arms_ranked_tie_neighbours_that_cannot_be_told_apart():
    """The ten-query datasets above. Order by pooled Δ: lift +0.25, tiny +0.05 (d1 alone: d2 did
    not vary), baseline. lift › tiny: d1's differences 0 and four 0.5 among ten (mean 0.2, sd
    0.258199, SE 0.081650), d2's five 0.5 (mean 0.25, SE 0.083333); Q 0.184 < 1 so τ² 0, pooled
    (150 · 0.2 + 144 · 0.25) / 294 = 0.224490 with SE √(1/294): z 3.849, p 1.185e-4. tiny ›
    baseline: d1's 0.5 among nine 0s (SE 0.05), d2 identical: z 1, p 0.317311. Holm over the two:
    2.37e-4 and 0.317311. lift is separated (rank 1); tiny and baseline tie (rank 2)."""
    runs = lift_and_tiny()
    m = matrix.build(runs, "baseline", "hybrid", ["baseline", "lift", "tiny"])
    (ranked,) = m.arm_ranks
    assert (ranked.system, ranked.datasets) == ("builtin", ("d1", "d2"))
    assert [(a.arm, a.rank) for a in ranked.arms] == [("lift", 1), ("tiny", 2), ("baseline", 2)]
    assert [a.delta for a in ranked.arms] == [pytest.approx(0.25), pytest.approx(0.05), 0.0]
    top, bottom = ranked.pairs
    assert (top.upper, top.lower, top.datasets, top.queries) == ("lift", "tiny", 2, 20)
    assert top.delta == pytest.approx(0.224490, abs=1e-6)
    z = 0.224490 * math.sqrt(294)
    assert top.p == pytest.approx(math.erfc(z / math.sqrt(2)), rel=1e-4) == pytest.approx(1.185e-4, rel=1e-3)
    assert (top.p_holm, top.mark) == (pytest.approx(2 * top.p), "separated")
    assert (bottom.p, bottom.p_holm, bottom.mark) == (pytest.approx(0.317311, abs=1e-6),
                                                      pytest.approx(0.317311, abs=1e-6), "tied")
    md = matrix.to_markdown(m)
    section = md[md.index("## Arms ranked across all datasets"):md.index("## What this matrix can tell")]
    assert "| builtin | 1 | lift | +0.250 | separated from tiny: +0.224 [+0.110, +0.339], p=<0.001 (<0.001 unadj.) |" \
        in section
    assert "| builtin | 2 | tiny | +0.050 | tied with baseline: +0.050 [-0.048, +0.148], p=0.317 (0.317 unadj.) |" \
        in section
    assert "| builtin | 2 | baseline | +0.000 | — |" in section


def test_a_cell_of_too_few_queries_is_not_testable_by_the_leaderboards_rule():
    """A dataset of one query that `lift` brings from rank 2 to 1: Δ +0.5, and no outcome of the
    paired test on one query is significant. The cell says so (was a p of 1.0 beside `needs`
    nothing), and so does its arms' ranking, by the same minimum; six queries are judged."""
    one = [fixture_runs.typed(fixture_runs.run("d1", arm, r, "python"))
           for arm, r in (("baseline", [2]), ("lift", [1]))]
    m = matrix.build(one, "baseline", "hybrid", ["baseline", "lift"])
    cell = row_of(m, "d1")["cells"]["lift"]
    assert (cell["delta_abs"], cell["testable"], cell["p_randomization"]) == (0.5, False, 1.0)
    md = matrix.to_markdown(m)
    line = next(x for x in md.splitlines() if x.startswith("| d1 |"))
    assert line.endswith("| 1.000 [1.00, 1.00]<br>Δ +0.500 +100.0% strong<br>not testable: 1 shared query, the test "
                         "needs ≥ 6 |")
    assert ("`not testable`: fewer queries than the paired test needs (6; on fewer no outcome is significant), so no "
            "p: neither tied nor told apart.") in md
    (ranked,) = m.arm_ranks
    assert [(a.arm, a.rank) for a in ranked.arms] == [("lift", 1), ("baseline", 1)]
    assert ranked.pairs[0].mark == "not testable"
    assert ("| builtin | 1 | lift | +0.500 | not testable: 1 shared query, the test needs ≥ 6, with baseline: +0.500 |"
            in md)
    six = [fixture_runs.typed(fixture_runs.run("d1", arm, r, "python"))
           for arm, r in (("baseline", [2] * 6), ("lift", [1] * 6))]
    m = matrix.build(six, "baseline", "hybrid", ["baseline", "lift"])
    cell = row_of(m, "d1")["cells"]["lift"]
    assert (cell["testable"], cell["p_randomization"], cell["p_holm"]) == (True, 2 / 2**6, 2 / 2**6)
    assert "not testable" not in matrix.to_markdown(m).split("\n## By language")[0]


def test_a_matrix_of_one_arm_says_what_is_absent_and_why():
    runs = [r for r in fixture_runs.runs() if r.arm == "baseline"]
    m = matrix.build(runs, "baseline", "hybrid", ["baseline"])
    assert m.arms == ("baseline",) and m.arm_ranks == () and "arm_ranks" not in m.to_json()
    assert all(not g.arms and g.mde is None for g in m.power.groups)
    md = matrix.to_markdown(m)
    said = ("The matrix has one arm, `baseline`: no arm is compared with it, so there is no Δ, test, MDE or pooled "
            "verdict to show. Add an arm to compare (docs/arms.md).")
    table_end = md.index("\n\n", md.index("| gamma | builtin |"))
    assert md[table_end:].startswith(f"\n\n{said}\n")  # under the table, whose MDE column is all —
    assert "## One knob across all datasets\n\nNo arm beside `baseline`.\n" in md
    assert f"## What this matrix can tell\n\n{said}\n" in md and "| system | group |" not in md


def test_a_benchmark_split_by_repository_is_pooled_over_its_tasks_as_the_field_reports_it():
    """lite-a (3 tasks) and lite-b (2) are splits of `lite`; `solo` is no benchmark's split. The
    pool is the micro average over all 5 tasks (not the mean of the two splits' means), its
    interval the bootstrap of the 5 values in dataset order; an arm one split lacks is left out."""
    from types import SimpleNamespace as NS

    from crmatrix.analysis.matrix import rollups

    def cell(values, n):
        return NS(method="hybrid", format=NS(name="swe-bench"), cell=NS(n=n),
                  benchmark=NS(metrics=("acc_all@1", "ndcg@10"), values=values), method_benchmarks={})

    table = {("lite-a", "builtin"): {"baseline": cell({"acc_all@1": (1.0, 0.0, 0.0), "ndcg@10": (1.0, 0.5, 0.0)}, 3),
                                     "wsi": cell({"acc_all@1": (1.0, 1.0, 0.0), "ndcg@10": (1.0, 1.0, 0.0)}, 3),
                                     "rrf": cell({"acc_all@1": (0.0, 0.0, 0.0), "ndcg@10": (0.0, 0.0, 0.0)}, 3)},
             ("lite-b", "builtin"): {"baseline": cell({"acc_all@1": (1.0, 1.0), "ndcg@10": (1.0, 1.0)}, 2),
                                     "wsi": cell({"acc_all@1": (0.0, 1.0), "ndcg@10": (0.5, 1.0)}, 2)},
             ("solo", "builtin"): {"baseline": cell({"acc_all@1": (0.0,), "ndcg@10": (0.0,)}, 1)}}
    pooled_as = {"lite-a": "lite", "lite-b": "lite"}
    pool, = rollups.pooled_benchmarks(table, ["baseline", "wsi", "rrf"], pooled_as)
    assert (pool.benchmark, pool.system, pool.format, pool.datasets, pool.n) == (
        "lite", "builtin", "swe-bench", ("lite-a", "lite-b"), 5)
    assert list(pool.arms) == ["baseline", "wsi"]  # rrf ran on lite-a alone
    base = pool.arms["baseline"]["acc_all@1"]
    assert base.mean == 0.6  # 3 of 5 tasks; the mean of the splits' means would be (1/3 + 1) / 2
    assert (base.ci_low, base.ci_high) == stats.bootstrap_ci([1.0, 0.0, 0.0, 1.0, 1.0])
    assert pool.arms["wsi"]["ndcg@10"].mean == 0.7
    # a benchmark of one split has its split's table alone
    assert rollups.pooled_benchmarks(table, ["baseline"], {"lite-a": "lite"}) == []


def test_every_method_of_a_benchmark_split_by_repository_is_pooled_and_tabled():
    """Each method every split ran under an arm is pooled over all the splits' tasks like the
    headline (a micro average, the bootstrap of the values in dataset order); a method one split
    lacks is left out; the Markdown tables the pool's methods and each split's, the headline marked."""
    from types import SimpleNamespace as NS

    from crmatrix.analysis.matrix import benchmarks, rollups
    from crmatrix.results.cell import Scored
    from crmatrix.results.matrix import BenchmarkEntry, MethodBenchmark

    names = ("acc_all@1", "mrr")

    def cell(methods, n):
        return NS(method="hybrid", format=NS(name="swe-bench"), cell=NS(n=n),
                  benchmark=NS(metrics=("acc_all@1",), values={"acc_all@1": methods["hybrid"]["acc_all@1"]}),
                  method_benchmarks={m: NS(metrics=names, values=v) for m, v in methods.items()})

    table = {("lite-a", "builtin"): {"baseline": cell({"hybrid": {"acc_all@1": (1.0, 0.0), "mrr": (1.0, 0.5)},
                                                       "file-bm25": {"acc_all@1": (0.0, 0.0), "mrr": (0.25, 0.0)},
                                                       "bm25": {"acc_all@1": (1.0, 1.0), "mrr": (1.0, 1.0)}}, 2)},
             ("lite-b", "builtin"): {"baseline": cell({"hybrid": {"acc_all@1": (1.0,), "mrr": (1.0,)},
                                                       "file-bm25": {"acc_all@1": (1.0,), "mrr": (0.5,)}}, 1)}}
    pool, = rollups.pooled_benchmarks(table, ["baseline"], {"lite-a": "lite", "lite-b": "lite"})
    assert pool.method_metrics == names and list(pool.methods) == ["baseline"]
    assert list(pool.methods["baseline"]) == ["file-bm25", "hybrid"]  # bm25 ran on lite-a alone
    bm = pool.methods["baseline"]["file-bm25"]
    assert (bm["acc_all@1"].mean, bm["mrr"].mean) == (1 / 3, 0.25)
    assert (bm["mrr"].ci_low, bm["mrr"].ci_high) == stats.bootstrap_ci([0.25, 0.0, 0.5])
    assert pool.methods["baseline"]["hybrid"]["acc_all@1"] == pool.arms["baseline"]["acc_all@1"]

    def scored(mean):
        return {n: Scored(mean=mean, ci_low=0.0, ci_high=1.0) for n in names}

    entry = BenchmarkEntry(dataset="lite-a", system="builtin", method="hybrid", format="swe-bench",
                           metrics=("acc_all@1",), arms={"baseline": scored(0.5)}, strata={}, dropped=None,
                           method_metrics=names,
                           methods={"baseline": {"hybrid": MethodBenchmark(scores=scored(0.5), strata=None),
                                                 "file-bm25": MethodBenchmark(scores=scored(0.125), strata=None)}})
    md = "\n".join(benchmarks.methods_md((entry,), (pool,), ("baseline",)))
    assert md.startswith("\n## Public benchmarks: every method\n")
    assert ("**lite · builtin** (swe-bench, baseline), pooled over lite-a, lite-b\n\n| method | acc_all@1 | mrr |\n"
            "|---|---:|---:|\n| file-bm25 | 0.333 [") in md
    assert ("**lite-a · builtin** (swe-bench, baseline)\n\n| method | acc_all@1 | mrr |\n|---|---:|---:|\n"
            "| file-bm25 | 0.125 [0.00, 1.00] | 0.125 [0.00, 1.00] |\n"
            "| hybrid (headline) | 0.500 [0.00, 1.00] | 0.500 [0.00, 1.00] |\n") in md
    assert benchmarks.methods_md((replace(entry, methods={}),), (), ("baseline",)) == []


def test_the_benchmark_section_names_the_candidate_rule_of_each_swe_bench_figure():
    from crmatrix.analysis.matrix import markdown
    from crmatrix.results.cell import Scored
    from crmatrix.results.matrix import BenchmarkEntry, Dropped, PooledBenchmark

    scores = {"baseline": {"acc_all@1": Scored(mean=0.5, ci_low=0.0, ci_high=1.0)}}

    def entry(dataset, outside):
        gold = {"candidates": "agentless", "tasks_outside_candidates": outside, "files_outside_candidates": outside}
        return BenchmarkEntry(dataset=dataset, system="builtin", method="hybrid", format="swe-bench",
                              metrics=("acc_all@1",), arms=scores, strata={},
                              dropped=Dropped(tasks=2, dropped=0, by_reason={}, gold=gold))

    pool = PooledBenchmark(benchmark="lite", system="builtin", method="hybrid", format="swe-bench",
                           datasets=("lite-a", "lite-b"), n=4, metrics=("acc_all@1",), arms=scores)
    md = "\n".join(markdown._benchmarks_md((entry("lite-a", 1), entry("lite-b", 0)), (pool,), ("baseline",)))
    assert "its candidate files are named by the rule that chose them" in md
    assert ("**lite · builtin** (swe-bench, hybrid), pooled: 4 tasks of 2 datasets (lite-a, lite-b); "
            "candidate files: agentless\n") in md
    assert ("2 tasks; 0 rows or citations dropped; candidate files: agentless; 1 tasks with 1 gold files outside "
            "them, kept as misses\n") in md
