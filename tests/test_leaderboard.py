"""Systems compared (crmatrix.analysis.versus and the leaderboard's charts): scores per system and
dataset, each system against the reference paired on the queries both answered, the order by
pooled Δ, and the charts each stage draws from the baseline arm's runs."""

import re

import fixture_runs
import pytest
from conftest import ROOT, chart_data, chart_spec, snakemake

from crmatrix import CrmatrixError, atomic, config
from crmatrix.analysis import versus
from crmatrix.plots import names
from crmatrix.results.run import Run
from crmatrix.stages import plot_costs, plot_leaderboard, plot_versus
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
    assert default_reference(systems) == "engine"
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
    flaky = sorted((r["kind"], r["failed"]) for r in failures if r["system"] == "flaky")
    assert flaky == [("crash", 1), ("timeout", 1)]
    assert [r["label"] for r in failures if r["system"] == "builtin"] == ["0 of 18 failed"]


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
