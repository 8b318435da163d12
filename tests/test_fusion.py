"""Fusion strategies and graph expansion on hand-computed rankings."""

import numpy as np
import pytest

from crmatrix import CrmatrixError
from crmatrix.engine import Engine, expansion, fusion, knobs
from crmatrix.symbols import Symbol

NAN = np.nan


def sym(name, path="src/a.py", line=1):
    return Symbol(name, "function", "", path, "python", line, line + 1, f"def {name}()", "", "")


def scored(a):
    return {i: round(float(a[i]), 9) for i in np.flatnonzero(~np.isnan(a))}


def test_tie_ranks_share_the_best_rank_of_a_tie():
    assert fusion.tie_ranks(np.array([5.0, 9.0, 5.0, 1.0])).tolist() == [2, 1, 2, 4]


def test_rrf_sums_reciprocal_ranks_and_a_missing_list_contributes_nothing():
    # lexical: s0 60, s1 60 (tied: both rank 1), s2 30 (rank 3); s3 not a lexical candidate
    lexical = np.array([60.0, 60.0, 30.0, NAN, NAN])
    semantic = [(3, 0.9), (2, 0.8), (0, 0.8)]  # ranks 1, 2, 2 (tied cosines)
    got = fusion.rrf(lexical, semantic, k=1)
    scale = 100 * (1 + 1) / 2  # the maximum, 2/(k+1), maps to 100
    assert scored(got) == {
        0: round((1 / 2 + 1 / 3) * scale, 9),  # lexical rank 1, semantic rank 2
        1: round((1 / 2) * scale, 9),          # lexical only
        2: round((1 / 4 + 1 / 3) * scale, 9),  # lexical rank 3, semantic rank 2
        3: round((1 / 2) * scale, 9),          # semantic only
    }
    assert np.isnan(got[4])
    # first in both lists is exactly 100
    assert fusion.rrf(np.array([10.0, 5.0]), [(0, 0.5)], k=60)[0] == pytest.approx(100.0)


def test_wsi_interpolates_min_max_normalized_scores():
    lexical = np.array([80.0, 40.0, 20.0, NAN])
    semantic = [(3, 0.6), (1, 0.5), (2, 0.2)]
    got = fusion.wsi(lexical, semantic, weight=0.75)
    # lexical normalized: s0 1, s1 1/3, s2 0; semantic: s3 1, s1 0.75, s2 0; s0 misses semantic, s3 lexical
    assert scored(got) == {0: round(100 * 0.25 * 1, 9), 1: round(100 * (0.25 / 3 + 0.75 * 0.75), 9),
                           2: 0.0, 3: round(100 * 0.75, 9)}
    # one candidate (all scores equal) normalizes to 1, not to a division by zero
    assert scored(fusion.wsi(np.array([7.0, NAN]), [(1, 0.3)], weight=0.5)) == {0: 50.0, 1: 50.0}


def test_dense_only_is_the_semantic_ranking_on_the_codelens_scale():
    got = fusion.dense_only([(2, 0.5), (0, 0.25)], 3)
    assert scored(got) == {2: 100.0, 0: 50.0} and np.isnan(got[1])


def engine(env, neighbours=None):
    syms = [sym("open_file", line=1), sym("read_config", line=5), sym("parse_line", line=9), sym("zeta", "src/b.py")]
    vecs = np.array([[1, 0], [0.6, 0.8], [0, 1], [0.8, 0.6]], dtype=np.float32)
    enc = lambda qs: np.array([[0.0, 1.0]] * len(qs), dtype=np.float32)  # noqa: E731
    return Engine(syms, knobs.resolve({"CODELENS_EMBED_HINT_AUTO": "0", **env}, None), vecs, enc, neighbours)


def test_the_engine_fuses_as_the_arm_says_and_ties_follow_path_line_name():
    q = "open file"
    assert [h.symbol for h in engine({"CRMATRIX_FUSION": "dense-only"}).search(q, "hybrid", 4)] == \
        [h.symbol for h in engine({}).search(q, "semantic", 4)] == ["parse_line", "read_config", "zeta", "open_file"]
    hits = engine({"CRMATRIX_FUSION": "rrf", "CRMATRIX_RRF_K": "0"}).search(q, "hybrid", 4)
    # lexical ranks open_file alone (1); semantic: parse_line 1, read_config 2, zeta 3, open_file 4
    assert [(h.symbol, round(h.score, 6)) for h in hits] == [
        ("open_file", round((1 + 1 / 4) * 50, 6)), ("parse_line", 50.0), ("read_config", 25.0),
        ("zeta", round(50 / 3, 6))]
    # a depth of 1 leaves only the best semantic candidate
    assert [h.symbol for h in engine({"CRMATRIX_FUSION": "dense-only", "CRMATRIX_SEMANTIC_DEPTH": "1"}
                                     ).search(q, "hybrid", 4)] == ["parse_line"]
    # ties: equal fused scores come in (path, start_line, name) order
    tied = engine({"CRMATRIX_FUSION": "wsi", "CRMATRIX_WSI_WEIGHT": "0"}).search("zzz", "hybrid", 4)
    assert [(h.path, h.symbol, h.score) for h in tied] == [
        ("src/a.py", "open_file", 0.0), ("src/a.py", "read_config", 0.0), ("src/a.py", "parse_line", 0.0),
        ("src/b.py", "zeta", 0.0)]


def test_2e_still_applies_after_any_fusion():
    on = {"CODELENS_RANK_SPARSE_TERM_WEIGHT": "1", "CRMATRIX_FUSION": "rrf"}
    base, boosted = engine({"CRMATRIX_FUSION": "rrf"}), engine(on)
    q = "open file"  # open_file covers both terms: the full default bonus
    assert boosted.hybrid_scores(q)[0] == pytest.approx(base.hybrid_scores(q)[0] + 20.0)
    assert boosted.hybrid_scores(q)[2] == base.hybrid_scores(q)[2]


def test_graph_expansion_scores_neighbours_of_the_seeds():
    scores = np.array([90.0, 40.0, NAN, NAN, 10.0, 80.0])
    # a small graph: 0-2, 0-4, 5-2, 5-3, 1-3 (1 is not a seed)
    neighbours = [np.array([2, 4]), np.array([3]), np.array([0, 5]), np.array([1, 5]), np.array([0]),
                  np.array([2, 3])]
    got = expansion.expand(scores, np.array([0, 5]), neighbours, 0.5)
    # 2 hears from 0 (45) and 5 (40): max 45; 3 from 5: 40; 4 keeps max(10, 45); 1 is no seed's neighbour
    assert got.tolist() == [90.0, 40.0, 45.0, 40.0, 45.0, 80.0]
    assert np.isnan(scores[2])  # the input is left as it was


def test_the_engine_expands_from_its_top_seeds_only_when_on():
    # parse_line (2) and zeta (3) are neighbours; open_file (0) and read_config (1) have none
    none = np.array([], dtype=np.int64)
    neighbours = [none, none, np.array([3]), np.array([2])]
    rrf = {"CRMATRIX_FUSION": "rrf", "CRMATRIX_RRF_K": "0", "CRMATRIX_SEMANTIC_DEPTH": "2"}
    q = "open file"
    # lexical: open_file alone (1/1); semantic depth 2: parse_line (1/1), read_config (1/2); scale 50
    plain = engine(rrf, neighbours).search(q, "hybrid", 4)
    assert [(h.symbol, h.score) for h in plain] == [("open_file", 50.0), ("parse_line", 50.0), ("read_config", 25.0)]
    # one seed: open_file (first of the tie by line), which has no neighbour: nothing joins
    one = engine({**rrf, "CRMATRIX_GRAPH_EXPAND": "1", "CRMATRIX_GRAPH_SEEDS": "1"}, neighbours).search(q, "hybrid", 4)
    assert one == plain
    # two seeds: parse_line pulls in zeta at 50 × 0.5, after read_config's tie by path
    two = engine({**rrf, "CRMATRIX_GRAPH_EXPAND": "1", "CRMATRIX_GRAPH_SEEDS": "2"}, neighbours).search(q, "hybrid", 4)
    assert [(h.symbol, h.score) for h in two] == [
        ("open_file", 50.0), ("parse_line", 50.0), ("read_config", 25.0), ("zeta", 25.0)]
    with pytest.raises(CrmatrixError, match="CRMATRIX_GRAPH_EXPAND=1 needs the corpus's graph"):
        engine({"CRMATRIX_GRAPH_EXPAND": "1"})


def test_the_fusion_knob_is_parsed_once_from_the_config_to_the_engine(tmp_path, monkeypatch):
    """Followed from the config to the engine, which hands its knobs to `fusion.fuse`: an arm's
    CRMATRIX_FUSION is parsed once, while the config resolves; its evaluation gets the parsed
    knobs in its cell (`Plan.cell`, `KnobSpec`) and never reads the arm's variables again."""
    import json
    from dataclasses import replace
    from pathlib import Path

    from test_systems import CORPUS, DATASET

    from crmatrix import config
    from crmatrix.config.plan import Plan
    from crmatrix.engine.engine import Engine
    from crmatrix.engine.knobs import kinds
    from crmatrix.stages import evaluate_arm, extract_symbols, fetch_corpus, prepare_dataset

    parsed, engines = [], []
    parse, init = kinds.Choice.parse, Engine.__init__

    def counted(self, var, raw):
        if var == "CRMATRIX_FUSION":
            parsed.append(raw)
        return parse(self, var, raw)

    def seen(self, symbols, kn, *args, **kwargs):
        engines.append(kn)
        init(self, symbols, kn, *args, **kwargs)

    monkeypatch.setattr(kinds.Choice, "parse", counted)
    monkeypatch.setattr(Engine, "__init__", seen)
    for rel, text in CORPUS.items():
        (tmp_path / "src" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "src" / rel).write_text(text)
    (tmp_path / "d.json").write_text(json.dumps(DATASET))
    m = config.from_dict({"corpora": {"c": {"path": str(tmp_path / "src")}},
                          "datasets": {"d": {"file": str(tmp_path / "d.json"), "corpus": "c"}},
                          "arms": {"baseline": {}, "rrf": {"CRMATRIX_FUSION": " RRF"}},
                          "systems": {"builtin": {"type": "builtin", "methods": ["lexical"]}}})
    assert parsed == [" RRF"]
    cell = Plan(m, root=str(tmp_path / "results")).cell("d", "builtin", "rrf")
    i = {k: Path(v) for k, v in cell.inputs.items() if k != "grep"}  # the grep baseline: run by the job
    fetch_corpus.run("c", m.corpora["c"].conf, i["tree"], i["manifest"], [], {})
    extract_symbols.run(i["tree"], i["manifest"], i["symbols"])
    prepare_dataset.run(i["dataset_file"], "codelens", "c", i["manifest"], i["symbols"], i["tasks"])
    run = evaluate_arm.run(replace(cell, inputs=i))
    assert parsed == [" RRF"]  # the evaluation parsed nothing
    assert [kn.fusion for kn in engines] == ["rrf"]
    assert run.provenance.system_run["knobs"]["fusion"] == "rrf" and run.methods["lexical"].metrics["n"] == 4
