"""Systems compared (crmatrix.analysis.versus and the leaderboard's charts): scores per system and
dataset, each system against the reference paired on the queries both answered, the order by
pooled Δ, the charts each stage draws from the baseline arm's runs, and the phase matrix's
leaderboard (from the cells alone) with its ranks and a headline method beaten by another."""

import re

import fixture_runs
import pytest
from conftest import ROOT, chart_data, chart_spec, snakemake

from crmatrix import CrmatrixError, atomic, config
from crmatrix.analysis import meta, versus
from crmatrix.config.settings import SystemSpec
from crmatrix.plots import frames, names
from crmatrix.plots import leaderboard as plots_leaderboard
from crmatrix.results.run import Run
from crmatrix.stages import collect_matrix, plot_costs, plot_gallery, plot_leaderboard, plot_versus
from crmatrix.systems.registry import default_reference

ALPHA = [1, 3, None, 2, 1, 4, None, 2, 1, 5]  # the reference's first relevant ranks (hybrid)
BETA = [2, 1, 1, None, 3, 1, 2, 1]


def _fail(run: dict, index: int, kind: str) -> None:
    q = run["methods"]["hybrid"]["queries"][index]
    q.update(rank=None, relevant_ranks=[], failure=kind, error=f"{kind} on purpose")


def runs() -> list[Run]:
    """builtin (the reference); `flaky`: the reference's ranks, but query 1 of alpha crashed and
    query 2 of beta timed out; `sharp`: every query found at rank 1."""
    out = []
    for system in ("builtin", "flaky", "sharp"):
        for dataset, ranks in (("alpha", ALPHA), ("beta", BETA)):
            r = fixture_runs.run(dataset, "baseline", [1] * len(ranks) if system == "sharp" else ranks, "python",
                                 system=system)
            out.append(r)
    _fail(out[2], 0, "crash")
    _fail(out[3], 1, "timeout")
    return [fixture_runs.typed(r) for r in out]


def _rr(ranks):
    return [1 / r if r else 0.0 for r in ranks]


def test_a_failure_on_either_side_leaves_the_query_out_of_the_paired_test():
    table = versus.compare(runs(), "builtin", "hybrid")
    flaky = next(v for v in table.versus if v.system == "flaky")
    alpha = next(s for s in flaky.studies if s.dataset == "alpha")
    # the nine queries both answered are answered alike: no Δ, though the crash costs flaky's own mean
    assert (alpha.n, alpha.left_out, alpha.delta) == (9, 1, 0.0)
    scores = {(c.dataset, c.system): c for c in table.scores}
    assert scores[("alpha", "flaky")].mean == pytest.approx(sum(_rr(ALPHA)) / 10 - 0.1)
    assert scores[("alpha", "flaky")].failures == {"crash": 1}
    assert scores[("beta", "flaky")].failed == 1
    sharp = next(v for v in table.versus if v.system == "sharp")
    deltas = {s.dataset: s.delta for s in sharp.studies}
    assert deltas["alpha"] == pytest.approx(1 - sum(_rr(ALPHA)) / 10)
    assert deltas["beta"] == pytest.approx(1 - sum(_rr(BETA)) / 8)
    assert sharp.pooled.k == 2 and sharp.effect == sharp.pooled.estimate > 0
    # by pooled Δ, highest first; flaky's 0 ties the reference's and falls to the name
    assert table.systems == ("sharp", "builtin", "flaky")


def test_the_comparison_is_deterministic():
    assert atomic.hash_obj(versus.compare(runs(), "builtin", "hybrid").to_json()) == \
        atomic.hash_obj(versus.compare(runs(), "builtin", "hybrid").to_json())


def test_reference_system_defaults_to_the_first_builtin_and_must_be_a_system():
    systems = {"peer": {"type": "command", "options": {"search": ["peer", "{query}"]}}, "engine": {"type": "builtin"}}
    assert default_reference({s: SystemSpec.from_conf(c) for s, c in systems.items()}) == "engine"
    cfg = {"corpora": {"c": {"path": "."}}, "datasets": {"d": {"file": "d.json", "corpus": "c"}},
           "arms": {"baseline": {}}, "systems": systems}
    assert config.from_dict(cfg).reference_system == "engine"
    assert config.from_dict({**cfg, "reference_system": "peer"}).reference_system == "peer"
    with pytest.raises(CrmatrixError, match=r"^c.yaml: reference_system: 'gone' is not one of the systems "
                                            r"\(peer, engine\)$"):
        config.from_dict({**cfg, "reference_system": "gone"}, "c.yaml")


def test_the_systems_view_is_named_only_with_a_reference():
    arms = {"builtin": ["baseline"], "peer": ["baseline"]}
    assert names.stems(["a"], arms, "baseline")[-1] == "quality-latency"
    assert names.stems(["a"], arms, "baseline", reference="builtin")[-4:] == [
        "leaderboard", "costs", "failures", "versus/peer"]


@pytest.fixture(scope="module")
def drawn(tmp_path_factory):
    d = tmp_path_factory.mktemp("systems")
    paths = []
    for r in runs():
        paths.append(d / "runs" / r.dataset / r.system / "baseline.json")
        r.write(paths[-1])
    out, runtime = d / "plots", d / "plots" / "vega" / "vega-embed.js"
    common = {"reference": "builtin", "headline_method": "hybrid", "runtime": runtime}
    plot_leaderboard.run(runs=paths, out=out / "leaderboard", **common)
    for system in ("flaky", "sharp"):
        plot_versus.run(runs=[p for p in paths if p.parent.name in ("builtin", system)], out=out / "versus" / system,
                        system=system, **common)
    plot_costs.run(runs=paths, out_dir=out, **common)
    return out


def test_the_leaderboard_orders_its_panels_by_pooled_delta(drawn):
    spec = chart_spec(drawn / "leaderboard.html")
    order = spec["facet"]["column"]["sort"]
    assert [o.split(" ")[0] for o in order] == ["sharp", "builtin", "flaky"]
    assert order[1] == "builtin (reference)" and order[2] == "flaky (Δ +0.000)"
    rows = {(r["system"].split(" ")[0], r["dataset"]): r for r in chart_data(spec)}
    assert len(rows) == 6 and rows[("flaky", "alpha")]["failed"] == 1 and rows[("sharp", "beta")]["value"] == 1.0
    for fmt in ("svg", "png"):
        assert (drawn / f"leaderboard.{fmt}").stat().st_size > 0


def test_the_forest_against_the_reference_says_the_test_is_on_queries_both_answered(drawn):
    spec = chart_spec(drawn / "versus" / "flaky.html")
    assert "paired on the 16 queries both answered (2 left out: a failure on either side)" in \
        " ".join(spec["title"]["subtitle"])
    labels = [r["label"] for r in chart_data(spec)]
    assert labels == ["alpha (n 9, 1 left out)", "beta (n 7, 1 left out)"]  # neither varied: no pool


def test_costs_and_failures_per_system(drawn):
    costs = {r["system"]: r for r in chart_data(chart_spec(drawn / "costs.html"))}
    assert set(costs) == {"builtin", "flaky", "sharp"}
    failures = chart_data(chart_spec(drawn / "failures.html"))
    flaky = sorted((r["outcome"], r["kind"], r["count"]) for r in failures if r["system"] == "flaky")
    assert flaky == [("failed", "crash", 1), ("failed", "timeout", 1)]
    assert [r["label"] for r in failures if r["system"] == "builtin"] == ["of 18: 0 failed"]


@pytest.mark.slow
def test_the_default_matrix_plans_the_leaderboard_of_its_two_systems(tmp_path):
    """The default config (builtin and code-search-graph): the leaderboard, costs and failures
    from both systems' baseline runs, and code-search-graph's forest against the builtin.
    Planned in a directory of its own: the project's results/ may hold a finished run."""
    for part in ("config", "datasets"):
        (tmp_path / part).symlink_to(ROOT / part)
    proc = snakemake(tmp_path, "-n", "all", "--quiet", "rules")
    planned = dict(re.findall(r"^(plot_\w+)\s+(\d+)$", proc.stdout, flags=re.M))
    assert (planned.get("plot_leaderboard"), planned.get("plot_versus"), planned.get("plot_costs")) == ("1", "1", "1")
    out = snakemake(tmp_path, "-n", "results/plots/versus/code-search-graph.svg").stdout
    assert "versus_chart_inputs" not in out and "results/runs/self/code-search-graph/baseline.json" in out


# --- the leaderboard in the phase matrix ------------------------------------------------------

def collected(tmp_path, docs: list[Run], reference: str = "builtin"):
    """The phase matrix of these hand-made runs as the workflow makes it: a cell_stats job per run,
    then collect_matrix over the cells alone (no run among its inputs)."""
    paths = []
    for r in docs:
        paths.append(tmp_path / "runs" / r.dataset / r.system / f"{r.arm}.json")
        r.write(paths[-1])
    cells = fixture_runs.cell_files(paths, "baseline", "hybrid")
    out = (tmp_path / "phase-matrix.json", tmp_path / "phase-matrix.md")
    m = collect_matrix.run(cells, "baseline", "hybrid", ["baseline"], {}, *out, ledger_path=tmp_path / "ledger.json",
                           reference=reference)
    return m, out[1].read_text()


def test_the_leaderboard_ranks_the_systems_from_their_baseline_cells(tmp_path):
    """builtin's ranks: MRR 0.478333 on alpha, 0.666667 on beta, macro 0.5725; flaky: its crash
    and its timeout cost it a query each (0.378333, 0.541667: macro 0.46) and tie it with the
    reference on the 16 queries both answered (no Δ to test); sharp finds every query at rank 1."""
    m, md = collected(tmp_path, runs())
    board = m.leaderboard
    table = versus.compare(runs(), "builtin", "hybrid")  # what the charts draw, from the runs
    assert [s.system for s in board.standings] == list(table.systems) == ["sharp", "builtin", "flaky"]
    st = {s.system: s for s in board.standings}
    assert [s.rank for s in board.standings] == [1, 2, 2]  # flaky is tied with builtin: they share its rank
    assert st["builtin"].mean == pytest.approx((sum(_rr(ALPHA)) / 10 + sum(_rr(BETA)) / 8) / 2) == \
        pytest.approx(0.5725)
    assert st["flaky"].mean == pytest.approx(0.46)
    assert (st["flaky"].failed, st["flaky"].failures, st["flaky"].paired, st["flaky"].delta) == (
        2, {"crash": 1, "timeout": 1}, 16, 0.0)
    assert st["flaky"].pooled is None and st["builtin"].delta is None and st["builtin"].paired is None
    assert all((s.datasets, s.queries) == (2, 18) for s in board.standings)
    # each system's Δ is the one its chart shows, from the same per-query scores
    sharp = next(v for v in table.versus if v.system == "sharp")
    assert st["sharp"].delta == sharp.effect and st["sharp"].pooled == sharp.pooled and st["sharp"].paired == 18
    # latency over all 18 queries (hybrid's 12, 15 and 18 ms): p50 15, p95 18, as the costs chart has it
    assert st["builtin"].latency_ms == {"p50": 15.0, "p95": 18.0}
    # the adjacent pairs: sharp beyond builtin (its pooled Δ, its p from the pool's z, alone in Holm's family)
    top, bottom = board.pairs
    assert (top.upper, top.lower, top.mark, top.datasets, top.queries) == ("sharp", "builtin", "separated", 2, 18)
    assert top.delta == sharp.effect and top.p == pytest.approx(meta.p_value(sharp.pooled.estimate, sharp.pooled.se))
    assert top.p_holm == top.p < 0.001
    assert (bottom.upper, bottom.lower, bottom.mark, bottom.delta, bottom.p, bottom.queries) == (
        "builtin", "flaky", "tied", 0.0, None, 16)
    section = md[md.index("## Leaderboard: systems compared"):md.index("## By language")]
    assert "| 2 | flaky | hybrid | 2 | 18 | 0.460 | +0.000 (no dataset varied) | — | 16 | 2 (1 crash, 1 timeout) | " \
           "0 | 0 | 15.0 | 18.0 |" in section
    assert "| 2 | builtin | hybrid | 2 | 18 | 0.573 | reference | — | — | 0 | 0 | 0 | 15.0 | 18.0 |" in section
    assert "| builtin › flaky | 2 | 16 | +0.000 | — | — | tied |" in section
    assert "⚠" not in section  # no headline is beaten here
    # the gallery shows the same section as a table, above the charts
    plot_gallery.run(svgs=[], charts_dir=tmp_path, matrix=tmp_path / "phase-matrix.json",
                     matrix_md=tmp_path / "phase-matrix.md", out=tmp_path / "index.html")
    page = (tmp_path / "index.html").read_text()
    board_html = page[page.index('<section id="leaderboard">'):page.index('<section id="power">')]
    assert "<h2>Leaderboard: systems compared</h2>" in board_html and "<td>builtin › flaky</td>" in board_html


def _one_way(ranks: dict[str, list]) -> list[Run]:
    """builtin and peer on each dataset of `ranks` (dataset -> (builtin's ranks, peer's))."""
    return [fixture_runs.typed(fixture_runs.run(d, "baseline", by[i], "python", system=s))
            for d, by in ranks.items() for i, s in enumerate(("builtin", "peer"))]


NOT_TESTABLE_1 = "not testable: 1 shared query, the test needs ≥ 6"


def test_a_pair_of_too_few_shared_queries_is_not_testable_never_tied(tmp_path):
    """One query per dataset: peer finds it at rank 1, builtin at 2, a Δ of +0.5 with no test to
    judge it (was `tied`). Six queries of one dataset judge it; five do not, though the pool's
    normal z on them is far below α: no outcome of the exact paired test on five is significant."""
    m, md = collected(tmp_path / "one", _one_way({"alpha": ([2], [1])}))
    (pair,) = m.leaderboard.pairs
    assert (pair.upper, pair.lower, pair.queries, pair.delta, pair.p, pair.p_holm, pair.mark) == (
        "peer", "builtin", 1, 0.5, None, None, "not testable")
    assert m.to_json()["leaderboard"]["pairs"][0]["mark"] == "not testable"
    assert m.to_json()["statistics"]["min_queries"] == 6
    st = {s.system: s for s in m.leaderboard.standings}
    assert [(s.system, s.rank) for s in m.leaderboard.standings] == [("peer", 1), ("builtin", 1)]
    assert (st["peer"].testable, st["builtin"].testable) == (False, None)
    section = md[md.index("## Leaderboard: systems compared"):md.index("## By language")]
    assert f"| 1 | peer | hybrid | 1 | 1 | 1.000 | +0.500 ({NOT_TESTABLE_1}) | — | 1 |" in section
    assert f"| peer › builtin | 1 | 1 | +0.500 | — | — | {NOT_TESTABLE_1} |" in section
    assert "tied" not in section.split("\n| rank |")[1]
    # the chart says it too
    compared = versus.compare(_one_way({"alpha": ([2], [1])}), "builtin", "hybrid")
    assert frames.leaderboard(compared)[1] == ["peer (Δ +0.500, not testable)", "builtin (reference)"]
    assert ("not testable: fewer than 6 queries both answered (no outcome of the paired test on fewer is "
            "significant), or no spread to test") in plots_leaderboard.draw(compared).to_dict()["title"]["subtitle"]

    # six datasets of one query each: enough queries, but no dataset's differences vary
    m, md = collected(tmp_path / "six", _one_way({f"d{i}": ([2], [1]) for i in range(6)}))
    (pair,) = m.leaderboard.pairs
    assert (pair.queries, pair.delta, pair.p, pair.mark) == (6, 0.5, None, "not testable")
    assert "| peer › builtin | 6 | 6 | +0.500 | — | — | not testable: no dataset's differences vary over its " \
           "queries, no spread to test |" in md

    # one dataset: five queries are too few whatever the pool's z says, six are judged
    for n, mark, rank in ((5, "not testable", 1), (6, "separated", 2)):
        m, md = collected(tmp_path / str(n), _one_way({"alpha": ([2] * n, [1] * (n - 1) + [2])}))
        (pair,) = m.leaderboard.pairs
        assert (pair.queries, pair.mark, m.leaderboard.standings[1].rank) == (n, mark, rank)
        assert (pair.p is None) == (n == 5) and pair.ci[0] > 0  # the interval clears 0 both times
    assert m.leaderboard.standings[0].testable and compared.versus[0].testable is False


def test_one_system_has_no_leaderboard(tmp_path):
    m, md = collected(tmp_path, [r for r in fixture_runs.runs() if r.arm == "baseline"])
    assert m.leaderboard is None and "leaderboard" not in m.to_json() and "## Leaderboard" not in md


def test_a_headline_beaten_by_another_method_is_said_under_the_table_and_in_the_leaderboard(tmp_path):
    """On alpha, builtin's bm25 finds every query at rank 1 (MRR 1.0 against hybrid's 0.478):
    it lifts the 7 queries hybrid does not rank first, all one way, so its exact randomization p
    is 2 / 2^7 = 0.015625; lexical (hybrid's ranks one worse) falls on all 8 it finds, p 2 / 2^8;
    Holm over the two: 0.015625 both. On beta, bm25 answers as hybrid: beaten nowhere there."""
    docs = []
    for d, (lang, by_arm) in fixture_runs.RANKS.items():
        if d in ("alpha", "beta"):
            r = fixture_runs.run(d, "baseline", by_arm["baseline"], lang)
            docs.append(fixture_runs.with_method(r, "bm25", [1] * 10 if d == "alpha" else by_arm["baseline"]))
            docs.append(fixture_runs.run(d, "baseline", by_arm["baseline"], lang, system="peer"))
    m, md = collected(tmp_path, [fixture_runs.typed(d) for d in docs])
    rows = {(r.dataset, r.system): r for r in m.rows}
    beaten = rows[("alpha", "builtin")].beaten_by
    assert list(beaten) == ["bm25"] and beaten["bm25"].mean == 1.0
    assert beaten["bm25"].delta_abs == pytest.approx(1 - sum(_rr(ALPHA)) / 10)
    assert (beaten["bm25"].p_randomization, beaten["bm25"].p_holm) == (2 / 2 ** 7, 0.015625)
    assert rows[("beta", "builtin")].beaten_by == {} and rows[("alpha", "peer")].beaten_by == {}
    assert "beaten_by" not in m.to_json()["rows"][1]  # beta's row: the key only where a method beats the headline
    table_note = md[md.index("⚠ A headline method beaten"):md.index("## Leaderboard")]
    assert "alpha · builtin: hybrid 0.478 < bm25 1.000 (Δ +0.522, p=0.016)" in table_note
    assert "`headline_method`" in table_note and "`reference_system`" in table_note
    caption = md[md.index("## Leaderboard"):md.index("| rank |")]
    assert ("⚠ builtin's headline hybrid is beaten beyond noise by another of its methods on 1 of its 2 datasets "
            "(alpha: bm25 1.000 (Δ +0.522, p=0.016))") in caption
    assert "peer's headline" not in caption
