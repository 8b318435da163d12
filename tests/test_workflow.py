"""End to end: Snakemake on a tiny matrix whose corpora are a git repository made here
(two commits, pinned at the first) and a local directory."""

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml
from conftest import BIN, ROOT, SHARED, by_hand, chart_data, chart_spec, needs_shared, snakemake, snakemake_cmd

PATH_CORPUS = {
    "lib/strings.js": (
        "// Turn a title into a URL slug.\n"
        "function slugify(title) {\n  return title.toLowerCase().replace(/ /g, '-');\n}\n\n"
        "class Cache {\n  get(key) {\n    return this.items[key];\n  }\n}\n"
    ),
    "lib/notes.txt": "not code\n",
}
GIT_DATASET = [
    {"query": "parse config", "expected_symbol": "parse_config", "expected_file_suffix": "pkg/core.py",
     "query_type": "short_phrase"},
    {"query": "Store", "expected_symbol": "Store", "expected_file_suffix": "pkg/core.py", "query_type": "identifier"},
    {"query": "persist a value under a key", "expected_symbol": "save", "expected_file_suffix": "pkg/core.py",
     "query_type": "natural_language"},
]
PATH_DATASET = [
    {"query": "slugify", "expected_symbol": "slugify", "expected_file_suffix": "lib/strings.js",
     "query_type": "identifier"},
    {"query": "cache lookup get", "expected_symbol": "get", "expected_file_suffix": "lib/strings.js"},
]


def write_matrix(work: Path, repo: Path, first: str) -> tuple[Path, dict]:
    """The tiny matrix in the new directory `work`: its git corpus is `repo` pinned at `first`."""
    (work / "local" / "lib").mkdir(parents=True)
    for rel, text in PATH_CORPUS.items():
        (work / "local" / rel).write_text(text)
    (work / "ds").mkdir()
    (work / "ds" / "gitds.json").write_text(json.dumps(GIT_DATASET))
    (work / "ds" / "pathds.json").write_text(json.dumps(PATH_DATASET))
    cfg = {
        "corpora": {"gitc": {"git": str(repo), "commit": first}, "pathc": {"path": "local"}},
        "datasets": {"gitds": {"file": "ds/gitds.json", "corpus": "gitc"},
                     "pathds": {"file": "ds/pathds.json", "corpus": "pathc"}},
        "arms": {"baseline": {}, "knob": {"CODELENS_RANK_SPARSE_TERM_WEIGHT": "1"}},
        # no embedding methods: this matrix needs no model and no index, so it runs in seconds
        "systems": {"builtin": {"type": "builtin", "methods": ["lexical", "bm25"]}},
        "headline_method": "lexical",
    }
    (work / "config.yaml").write_text(yaml.safe_dump(cfg))
    return work, cfg


@pytest.fixture
def matrix(tmp_path, two_commit_repo):
    repo, first, _ = two_commit_repo
    return write_matrix(tmp_path / "work", repo, first)


def run(work, *args, check=True):
    return snakemake(work, "--configfile", str(work / "config.yaml"), "--cores", "2", *args, check=check)


def planned_outputs(work) -> list[str]:
    out = run(work, "-n", "all").stdout
    return sorted(re.findall(r"^\s+output: (.+)$", out, flags=re.M))


@pytest.mark.slow
def test_matrix_end_to_end_then_noop_then_one_dataset(matrix):
    work, _ = matrix
    run(work, "all")
    md = (work / "results/matrix/phase-matrix.md").read_text()
    assert "| gitds | builtin | lexical | python | 3 | " in md
    assert "| pathds | builtin | lexical | javascript | 2 | " in md
    # each dataset's audit: 1 natural-language query, and it names none of save's words
    audited = json.loads((work / "results/audit/gitds.json").read_text())
    assert (audited["dataset"], audited["n"], audited["flagged"]) == ("gitds", 3, False)
    assert (work / "results/audit/gitds.html").read_text().startswith("<!DOCTYPE html>")
    assert md.splitlines()[4] == "| dataset | system | method | language | n | MDE | baseline | knob |"

    # the git corpus is the first commit, not the head
    man = json.loads((work / "results/corpora/gitc/manifest.json").read_text())
    assert [f["path"] for f in man["files"]] == ["pkg/core.py"]
    path_man = json.loads((work / "results/corpora/pathc/manifest.json").read_text())
    assert path_man["languages"] == {"javascript": 1, "other": 1}

    r = json.loads((work / "results/runs/gitds/builtin/baseline.json").read_text())
    q = r["methods"]["lexical"]["queries"]
    assert [x["rank"] for x in q[:2]] == [1, 1]
    assert q[0]["top_candidate"] == {"path": "pkg/core.py", "symbol": "parse_config", "kind": "function",
                                     "start_line": 1, "end_line": 3, "score": 80.0}  # rule 5
    prov = r["provenance"]
    assert prov["corpus"]["content_hash"] == man["content_hash"] and prov["corpus"]["pin"]["kind"] == "git"
    assert len(prov["dataset"]["sha256"]) == 64 and prov["arm"] == {"name": "baseline", "env": {}}
    assert set(r["methods"]["lexical"]["by_query_type"]) == {"identifier", "natural_language", "short_phrase"}

    # every light job (crmatrix.pipeline.warm) started warm: Snakemake handed each the server's
    # environment (a variable it set per job would have each refused, and run plainly)
    light = sum(len(list((work / "logs" / rule).rglob("*.log")))
                for rule in ("evaluate_arm", "cell_stats", "plot_forest"))
    assert light > 0
    assert (work / "logs/warm-server.log").read_text().endswith(f"warm: {light} jobs started warm, 0 refused\n")

    # nothing changed: nothing to do
    assert "Nothing to be done" in run(work, "-n", "all").stdout

    # a touch alone is no change: Snakemake 9 compares the checksum of an input whose mtime moved
    os.utime(work / "ds" / "pathds.json")
    assert "Nothing to be done" in run(work, "-n", "all").stdout

    # editing one dataset re-runs only that dataset's jobs (and the matrix that collects them and its
    # charts); its runs write their own event logs, no other run's is written again
    (work / "ds" / "pathds.json").write_text(json.dumps(PATH_DATASET, indent=1))
    planned = planned_outputs(work)
    assert "results/plots/index.html" in planned
    assert [p for p in planned if not p.startswith("results/plots/")] == sorted([
        "results/audit/pathds.json, results/audit/pathds.md, results/audit/pathds.html",
        "results/datasets/pathds.jsonl, results/trec/pathds.qrels, results/datasets/pathds.summary.json",
        "results/runs/pathds/builtin/baseline.json, results/trec/pathds/builtin/baseline, "
        "results/tracking/pathds/builtin/baseline.jsonl",
        "results/runs/pathds/builtin/knob.json, results/trec/pathds/builtin/knob, "
        "results/tracking/pathds/builtin/knob.jsonl",
        "results/cells/pathds/builtin/baseline.json, results/times/pathds/builtin/baseline.json",
        "results/cells/pathds/builtin/knob.json, results/times/pathds/builtin/knob.json",
        "results/matrix/phase-matrix.json, results/matrix/phase-matrix.md",
        "results/tokenbench/pathds.json",
    ])

    # editing a file of the path corpus re-runs that corpus's chain only
    run(work, "all")
    (work / "local/lib/strings.js").write_text(PATH_CORPUS["lib/strings.js"] + "\nfunction extra() {}\n")
    planned = planned_outputs(work)
    assert "results/corpora/pathc/tree, results/corpora/pathc/manifest.json" in planned
    # (the charts, which hold every dataset, follow the matrix and the runs)
    assert not any("gitc" in p or "gitds" in p for p in planned if not p.startswith("results/plots/"))


@pytest.mark.slow
def test_reruns_give_identical_ranks_whatever_the_cores(matrix):
    work, _ = matrix
    run(work, "all")
    first = json.loads((work / "results/runs/pathds/builtin/knob.json").read_text())
    matrix_bytes = (work / "results/matrix/phase-matrix.json").read_bytes()
    snakemake(work, "--configfile", str(work / "config.yaml"), "--cores", "1", "--forceall", "all")
    again = json.loads((work / "results/runs/pathds/builtin/knob.json").read_text())

    def strip(run):
        return [(q["task_id"], q["rank"], q["top_candidate"]) for q in run["methods"]["lexical"]["queries"]]

    assert strip(first) == strip(again)
    assert (work / "results/matrix/phase-matrix.json").read_bytes() == matrix_bytes


def test_bad_config_stops_before_any_job_with_one_line(matrix):
    work, cfg = matrix
    cfg["arms"]["knob"] = {"CODELENS_RANK_SPARSE_TERM_WEIGHT": 1}
    (work / "config.yaml").write_text(yaml.safe_dump(cfg))
    proc = run(work, "-n", "all", check=False)
    assert proc.returncode != 0
    assert (f"crmatrix: {work / 'config.yaml'}: arms.knob.CODELENS_RANK_SPARSE_TERM_WEIGHT: expected string, got an "
            "integer 1 "
            "(quote it in YAML)") in proc.stderr
    assert not (work / "results").exists()


def test_missing_commit_fails_and_leaves_results_clean(matrix):
    work, cfg = matrix
    cfg["corpora"]["gitc"]["commit"] = "2" * 40
    (work / "config.yaml").write_text(yaml.safe_dump(cfg))
    proc = run(work, "results/corpora/gitc/manifest.json", check=False)
    assert proc.returncode != 0
    log = (work / "logs/fetch_corpus/gitc.log").read_text()
    assert log.startswith(f"crmatrix: commit {'2' * 40} of ")
    leftovers = [p for p in (work / "results").rglob("*") if p.is_file() or any(p.iterdir())] \
        if (work / "results").exists() else []
    assert leftovers == []


def test_bad_dataset_row_stops_its_dataset_with_the_line_on_the_terminal(matrix):
    work, _ = matrix
    rows = GIT_DATASET + [{"query": "x", "expected_symbol": "later", "expected_file_suffix": "pkg/core.py"}]
    (work / "ds" / "gitds.json").write_text(json.dumps(rows))
    proc = run(work, "results/datasets/gitds.jsonl", check=False)
    assert proc.returncode != 0
    line = ("crmatrix: ds/gitds.json: row 3: field 'expected_symbol' 'later' is not a symbol of "
            "pkg/core.py (it has 3: Store, parse_config, save)")
    assert (work / "logs/prepare_dataset/gitds.log").read_text().strip() == line
    assert line in proc.stderr.splitlines()  # on the terminal, not only in the log
    assert not (work / "results/datasets/gitds.jsonl").exists()
    assert not (work / "results/trec/gitds.qrels").exists()
    # fixed: exactly the failed job is left to do for that target
    (work / "ds" / "gitds.json").write_text(json.dumps(GIT_DATASET))
    out = run(work, "-n", "results/datasets/gitds.jsonl").stdout
    assert re.findall(r"^rule (\w+):", out, flags=re.M) == ["prepare_dataset"]


@pytest.mark.slow
def test_a_corrupt_intermediate_is_one_line_naming_it(matrix):
    """Not our error class at the source (a JSON decode error), but the user sees which file."""
    work, _ = matrix
    run(work, "all")
    (work / "results/symbols/gitc.jsonl").write_text('{"name": "parse_config", "path"\n')
    proc = run(work, "all", check=False)
    assert proc.returncode != 0
    assert ("crmatrix: results/symbols/gitc.jsonl: line 1: not valid JSON (Expecting ':' delimiter: line 2 column 1 "
            "(char 32)); it is corrupt or was written by something else: delete it and run again") in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.slow
def test_where_things_are_found_is_no_reason_to_rerun(matrix, tmp_path):
    """Mirrors, registries and the cache's location change no result, so no job re-runs."""
    work, cfg = matrix
    run(work, "all")
    cfg = {**cfg, "git_mirrors": [str(tmp_path)], "registries": {"pypi": "http://127.0.0.1:9/simple"},
           "cache_dir": "elsewhere/cache"}
    (work / "config.yaml").write_text(yaml.safe_dump(cfg))
    assert "Nothing to be done" in run(work, "-n", "all").stdout
    env = {**os.environ, "CRMATRIX_GIT_MIRRORS": str(tmp_path / "more")}
    argv = [*snakemake_cmd(work), "--configfile", str(work / "config.yaml"), "--cores", "1", "-n", "all"]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=300, env=env)
    assert "Nothing to be done" in proc.stdout, proc.stdout + proc.stderr


def test_respelling_a_knob_is_no_reason_to_rerun(matrix):
    work, cfg = matrix
    run(work, "all")
    cfg["arms"]["knob"] = {"CODELENS_RANK_SPARSE_TERM_WEIGHT": "True"}
    (work / "config.yaml").write_text(yaml.safe_dump(cfg))
    assert "Nothing to be done" in run(work, "-n", "all").stdout
    run_json = json.loads((work / "results/runs/gitds/builtin/knob.json").read_text())
    assert run_json["provenance"]["arm"]["env"] == {"CODELENS_RANK_SPARSE_TERM_WEIGHT": "1"}


def test_lint_is_clean():
    proc = snakemake(ROOT, "--lint", check=False)
    assert "Congratulations, your workflow is in a good condition!" in proc.stdout + proc.stderr


@pytest.mark.slow
@needs_shared
def test_seed_config_runs_ripgrep_from_the_shared_mirror(tmp_path):
    """The example of docs/datasets.md: a git corpus at a pinned commit via the mirror, plus a dataset,
    is a config edit only. Lexical methods keep it quick; every dataset row must validate."""
    cfg = yaml.safe_load((ROOT / "config" / "seed.yaml").read_text())
    cfg["git_mirrors"] = [str(SHARED / "corpora")]
    cfg["datasets"] = {"ripgrep": {**cfg["datasets"]["ripgrep"], "file": str(ROOT / "datasets" / "ripgrep.json")}}
    cfg["systems"] = {"builtin": {"type": "builtin", "methods": ["lexical", "bm25"]}}
    cfg["headline_method"] = "lexical"
    cfg["arms"] = {"baseline": cfg["arms"]["baseline"]}
    (tmp_path / "seed.yaml").write_text(yaml.safe_dump(cfg))
    snakemake(tmp_path, "--configfile", str(tmp_path / "seed.yaml"), "--cores", "2", "all")
    man = json.loads((tmp_path / "results/corpora/ripgrep/manifest.json").read_text())
    assert man["origin"]["source"].endswith("BurntSushi+ripgrep@3fce3b5b.bundle")
    assert man["languages"] == {"rust": len(man["files"])}
    run = json.loads((tmp_path / "results/runs/ripgrep/builtin/baseline.json").read_text())
    assert run["methods"]["lexical"]["metrics"]["n"] == 34


def test_malformed_yaml_names_file_line_and_column(tmp_path):
    (tmp_path / "config").mkdir()
    (tmp_path / "config/config.yaml").write_text("corpora:\n  a: {path: .\n  b: 1\n")
    proc = snakemake(tmp_path, "-n", "--cores", "1", check=False)
    assert proc.returncode != 0
    assert ("crmatrix: config/config.yaml: line 3, column 4: not valid YAML: while parsing a flow mapping "
            "expected ',' or '}', but got ':'") in proc.stderr
    # `make run CONFIG=FILE` checks the file with crmatrix validate first, which says the same
    cli = subprocess.run([str(BIN / "crmatrix"), "validate", "config/config.yaml"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=60)
    assert cli.returncode == 2
    assert cli.stderr.startswith("crmatrix: config/config.yaml: line 3, column 4: not valid YAML")


def planned_rules(work, target="all") -> list[str]:
    return sorted(re.findall(r"^(?:local)?rule (\w+):", run(work, "-n", target).stdout, flags=re.M))


def leftovers(work) -> list[str]:
    """Files under results/ other than those of finished jobs Snakemake knows of (none here)."""
    return sorted(p.relative_to(work).as_posix() for p in (work / "results").rglob("*") if p.is_file()) \
        if (work / "results").exists() else []


def test_battery_a_repeated_query(matrix):
    work, _ = matrix
    (work / "ds" / "gitds.json").write_text(json.dumps(GIT_DATASET + [{**GIT_DATASET[0], "query": "Parse Config "}]))
    proc = run(work, "results/datasets/gitds.jsonl", check=False)
    assert proc.returncode != 0
    assert "crmatrix: ds/gitds.json: row 3: query 'Parse Config ' repeats row 0 ('parse config')" in proc.stderr
    assert not any("datasets/" in p or p.endswith(".qrels") for p in leftovers(work))
    (work / "ds" / "gitds.json").write_text(json.dumps(GIT_DATASET))
    assert planned_rules(work, "results/datasets/gitds.jsonl") == ["prepare_dataset"]


def test_battery_a_commit_found_nowhere(matrix):
    work, cfg = matrix
    good = cfg["corpora"]["gitc"]["commit"]
    cfg["corpora"]["gitc"]["commit"] = "2" * 40
    (work / "config.yaml").write_text(yaml.safe_dump(cfg))
    proc = run(work, "results/corpora/gitc/manifest.json", check=False)
    assert proc.returncode != 0
    assert f"crmatrix: commit {'2' * 40} of {cfg['corpora']['gitc']['git']} found nowhere; tried:" in proc.stderr
    assert leftovers(work) == []
    cfg["corpora"]["gitc"]["commit"] = good
    (work / "config.yaml").write_text(yaml.safe_dump(cfg))
    assert planned_rules(work, "results/corpora/gitc/manifest.json") == ["fetch_corpus"]


@pytest.mark.slow
def test_battery_an_out_of_range_knob_is_warned_and_flagged(matrix):
    work, cfg = matrix
    cfg["arms"]["knob"]["CODELENS_RANK_SPARSE_THRESHOLD"] = "500"
    (work / "config.yaml").write_text(yaml.safe_dump(cfg))
    proc = run(work, "all")
    assert (f"crmatrix: warning: {work / 'config.yaml'}: arms.knob: CODELENS_RANK_SPARSE_THRESHOLD=500 clamped to "
            "90") in proc.stderr
    md = (work / "results/matrix/phase-matrix.md").read_text()
    assert re.search(r"^\| gitds \| builtin \| lexical \|.*⚠ clamped \|$", md, flags=re.M), md


def test_battery_a_fifo_in_a_path_corpus_is_skipped_not_read(matrix):
    work, _ = matrix
    os.mkfifo(work / "local" / "lib" / "pipe.js")
    run(work, "results/corpora/pathc/manifest.json")  # the default timeout bounds a hang
    man = json.loads((work / "results/corpora/pathc/manifest.json").read_text())
    assert {"path": "lib/pipe.js", "reason": "not-a-regular-file"} in man["skipped"]


def test_the_configs_mirror_reaches_the_fetch_job(matrix, tmp_path):
    """A commit found only in a bundle of the config's `git_mirrors` (its URL leads nowhere)."""
    work, cfg = matrix
    repo = Path(cfg["corpora"]["gitc"]["git"])
    first = cfg["corpora"]["gitc"]["commit"]
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    subprocess.run(["git", "branch", "pinned", first], cwd=repo, check=True, capture_output=True)
    subprocess.run(["git", "bundle", "create", str(mirror / "acme+demo@0000.bundle"), "pinned"], cwd=repo, check=True,
                   capture_output=True)
    cfg["corpora"]["gitc"]["git"] = str(tmp_path / "nowhere" / "acme" / "demo")
    cfg["git_mirrors"] = [str(mirror)]
    (work / "config.yaml").write_text(yaml.safe_dump(cfg))
    run(work, "results/corpora/gitc/manifest.json")
    man = json.loads((work / "results/corpora/gitc/manifest.json").read_text())
    assert man["origin"]["source"] == str(mirror / "acme+demo@0000.bundle")
    assert [f["path"] for f in man["files"]] == ["pkg/core.py"]


OFF = {"CODELENS_EMBED_HINT_AUTO": "0"}
B2C = {**OFF, "CODELENS_EMBED_HINT_INCLUDE_COMMENTS": "1", "CODELENS_EMBED_HINT_INCLUDE_API_CALLS": "1"}
# Two more JavaScript files: with three, the path corpus has a dominant language (CodeLens's minimum)
MORE_JS = {
    "lib/retry.js": "// Call fn again after a failure, waiting longer each time.\nfunction retry(fn, times) {\n"
                    "  for (let i = 0; i < times; i++) { try { return fn(); } catch (e) { wait(2 ** i); } }\n}\n",
    "lib/queue.js": "class Queue {\n  // Take the oldest item out of the queue.\n  pop() {\n"
                    "    return this.items.shift();\n  }\n}\n",
}


@pytest.fixture
def indexed(matrix):
    """The tiny matrix with an embedding index, built: the path corpus declares its language
    (javascript), the git corpus (one Python file, so no dominant language) does not."""
    work, cfg = matrix
    for rel, text in MORE_JS.items():
        (work / "local" / rel).write_text(text)
    cfg = {**cfg, "corpora": {**cfg["corpora"], "pathc": {"path": "local", "language": "javascript"}},
           "systems": {"builtin": {"type": "builtin", "methods": ["lexical", "semantic"]}},
           "arms": {"baseline": OFF, "knob": {**OFF, "CODELENS_RANK_SPARSE_TERM_WEIGHT": "1"}, "2b2c": B2C}}
    (work / "config.yaml").write_text(yaml.safe_dump(cfg))
    run(work, "all")
    return work, cfg


def plan(work, cfg) -> tuple[list[str], list[str]]:
    """The jobs a dry run of `all` plans under cfg: their rules (but `all` itself), and their
    outputs without the charts (one job each, holding every run or cell)."""
    (work / "config.yaml").write_text(yaml.safe_dump(cfg))
    out = run(work, "-n", "all").stdout
    rules = sorted(r for r in re.findall(r"^(?:local)?rule (\w+):", out, flags=re.M) if r != "all")
    outputs = sorted(o for o in re.findall(r"^\s+output: (.+)$", out, flags=re.M)
                     if not o.startswith("results/plots/"))
    return rules, outputs


# A new or changed run comes with its cell's statistics (cell_stats) and writes its own event log
# (results/tracking/); what follows any of them: the matrix assembling the cells;
# gate_candidates only follows the runs of a `compare:` pair, and this matrix has none.
RUN = ["evaluate_arm", "cell_stats"]
AFTER_RUNS = ["collect_matrix"]
MATRIX = "results/matrix/phase-matrix.json, results/matrix/phase-matrix.md"


def charts_after_runs(cfg, forests: int = 1, baseline: bool = False) -> list[str]:
    """The chart jobs that follow new or changed runs (common.smk's `*_chart_inputs`): those that
    read the phase matrix or every run (each system's rows, the heatmap, the latency charts and
    the page of them all), and the forests of the `forests` arms whose cells changed (a forest
    reads its arm's and the baseline's cells alone); never the runtime. `baseline`: the
    baseline's runs changed too, which the systems-compared charts (leaderboard, costs) read."""
    return (["plot_rows"] * len(cfg["systems"]) + ["plot_forest"] * forests
            + ["plot_heatmap", "plot_latency", "plot_gallery"]
            + (["plot_leaderboard", "plot_costs"] if baseline else []))


def evaluations(arm, datasets=("gitds", "pathds")):
    """The outputs of an arm's runs on these datasets, and of their cells (each with its run's times)."""
    return [out for d in datasets for out in (f"results/runs/{d}/builtin/{arm}.json, results/trec/{d}/builtin/{arm}, "
                                              f"results/tracking/{d}/builtin/{arm}.jsonl",
                                              f"results/cells/{d}/builtin/{arm}.json, "
                                              f"results/times/{d}/builtin/{arm}.json")]


@pytest.mark.slow
@by_hand
def test_incremental_work_is_exactly_what_changed(indexed, two_commit_repo):
    work, cfg = indexed
    indexes = {c: sorted(p.name for p in (work / "results/index" / c / "builtin").iterdir()) for c in ("gitc", "pathc")}
    assert {c: len(k) for c, k in indexes.items()} == {"gitc": 2, "pathc": 2}  # baseline's (knob's too) and 2b2c's

    # no change: no job
    assert plan(work, cfg) == ([], [])
    assert "Nothing to be done" in run(work, "-n", "all").stdout

    # a query-time arm: its evaluations, their cells (no other arm's cell: each is its run against
    # the baseline's, and neither changed), what follows runs and its own forest, no index
    query_time = {**cfg, "arms": {**cfg["arms"], "2e": {**OFF, "CODELENS_RANK_SPARSE_TERM_WEIGHT": "1",
                                                        "CODELENS_RANK_SPARSE_THRESHOLD": "40"}}}
    assert plan(work, query_time) == (sorted(RUN * 2 + AFTER_RUNS + charts_after_runs(query_time)),
                                      sorted([*evaluations("2e"), MATRIX]))

    # an index-time arm: one index job per corpus
    strict = {**cfg, "arms": {**cfg["arms"], "strict": {**B2C, "CODELENS_EMBED_HINT_STRICT_LITERALS": "1"}}}
    rules, outputs = plan(work, strict)
    assert rules == sorted(["build_index"] * 2 + RUN * 2 + AFTER_RUNS + charts_after_runs(strict))
    built = [o for o in outputs if o.startswith("results/index/")]
    assert [o.rsplit("/", 2)[0] for o in built] == ["results/index/gitc", "results/index/pathc"]
    assert sorted(set(outputs) - set(built)) == sorted([*evaluations("strict"), MATRIX])

    # auto: on the path corpus it resolves (javascript gates 2b/2c on) to 2b2c's index; on the
    # git corpus, whose language is known only after the fetch, it builds its own
    auto = {**cfg, "arms": {**cfg["arms"], "auto": {"CODELENS_EMBED_HINT_AUTO": "1"}}}
    rules, outputs = plan(work, auto)
    assert rules == sorted(["build_index"] + RUN * 2 + AFTER_RUNS + charts_after_runs(auto))
    assert [o.rsplit("/", 1)[0] for o in outputs if o.startswith("results/index/")] == ["results/index/gitc/builtin"]
    run(work, "all")  # the shared index serves auto: it checks the knobs it was built with against auto's
    assert sorted(p.name for p in (work / "results/index/pathc/builtin").iterdir()) == indexes["pathc"]
    runs = {d: json.loads((work / f"results/runs/{d}/builtin/auto.json").read_text()) for d in ("gitds", "pathds")}
    knobs = {d: r["provenance"]["system_run"]["knobs"] for d, r in runs.items()}  # resolved, as the engine ran them
    assert {k: knobs["pathds"][k] for k in ("auto", "language", "nl_tokens", "api_calls", "sparse")} == {
        "auto": True, "language": "javascript", "nl_tokens": True, "api_calls": True, "sparse": False}
    assert {k: knobs["gitds"][k] for k in ("auto", "language", "nl_tokens", "api_calls")} == {
        "auto": True, "language": None, "nl_tokens": False, "api_calls": False}
    assert runs["pathds"]["provenance"]["arm"]["env"] == {"CODELENS_EMBED_HINT_AUTO": "1"}
    # the charts' legends name the model by the config's name for it (the default), not by its source
    arms_chart = chart_data(chart_spec(work / "results/plots/arms/builtin/pathds.html"))
    assert {d["arm"]: d["model"] for d in arms_chart} == {a: "minilm" for a in auto["arms"]}

    # a query-time arm that leaves auto gating at its default (on): its evaluations and what follows
    # them, no index, even on the git corpus whose language waits for the fetch (auto's index is its)
    tuned = {**auto, "arms": {**auto["arms"], "tuned": {"CODELENS_RANK_SPARSE_THRESHOLD": "30"}}}
    assert plan(work, tuned) == (sorted(RUN * 2 + AFTER_RUNS + charts_after_runs(tuned)),
                                 sorted([*evaluations("tuned"), MATRIX]))

    # a new pin of one corpus: everything downstream of it, nothing of the other
    _, _, second = two_commit_repo
    moved = {**auto, "corpora": {**auto["corpora"], "gitc": {**auto["corpora"]["gitc"], "commit": second}}}
    rules, outputs = plan(work, moved)
    assert rules == sorted(["fetch_corpus", "extract_symbols", "prepare_dataset", "grep_baseline", "audit_dataset",
                            "embed_queries"]  # its dataset's new tasks (its one model for every arm)
                           + ["build_index"] * 3
                           + RUN * 4 + AFTER_RUNS + charts_after_runs(moved, forests=len(moved["arms"]) - 1,
                                                                         baseline=True))
    assert [o for o in outputs if "pathc" in o or "pathds" in o] == []
    assert sorted(o for o in outputs if o.startswith(("results/runs/", "results/cells/"))) == sorted(
        r for a in moved["arms"] for r in evaluations(a, ["gitds"]))


def chart_jobs(dry_run: str) -> list[tuple[str, str]]:
    """The chart jobs of a dry run: (rule, the chart's path without suffix, or its one output)."""
    jobs = re.findall(r"^(?:local)?rule (plot_\w+):\n(?:\s+\w+: .*\n)*?\s+output: ([^,\n]+)", dry_run, flags=re.M)
    return sorted((rule, out.removesuffix(".svg")) for rule, out in jobs)


@by_hand
def test_incremental_charts_an_added_arm_plans_the_charts_that_draw_it_and_leaves_the_others(matrix):
    """A query-time arm on one of two systems, beside a sweep: the chart jobs it plans are the
    ones whose inputs it changes (the input functions in common.smk), and every other chart
    file keeps its mtime: the charts of every arm (rows, heatmap, latency, the page) read the
    phase matrix or every run, which it changes, and its own forest is new; the other arms'
    forests and the sweep's grid read their own arms' cells, which it leaves be."""
    work, cfg = matrix
    cfg = {**cfg, "sweeps": {"sparse": {"env": {"CODELENS_RANK_SPARSE_TERM_WEIGHT": "1"},
                                        "axes": [{"var": "CODELENS_RANK_SPARSE_THRESHOLD", "name": "t",
                                                  "values": ["20", "40"]}]}},
           "systems": {**cfg["systems"],
                       "peer": {"type": "builtin", "methods": ["bm25"], "arms": ["baseline", "knob"]}}}
    (work / "config.yaml").write_text(yaml.safe_dump(cfg))
    run(work, "all")
    files = sorted(p for p in (work / "results/plots").rglob("*") if p.is_file())
    before = {p: p.stat().st_mtime_ns for p in files}
    logged = {p: p.stat().st_mtime_ns for p in (work / "results/tracking").rglob("*.jsonl")}

    added = {**cfg, "arms": {**cfg["arms"], "2e": {"CODELENS_RANK_SPARSE_TERM_WEIGHT": "1",
                                                   "CODELENS_RANK_SPARSE_THRESHOLD": "60"}}}
    (work / "config.yaml").write_text(yaml.safe_dump(added))
    planned = chart_jobs(run(work, "-n", "all").stdout)
    assert planned == sorted(
        [("plot_rows", f"results/plots/arms/{s}/gitds") for s in ("builtin", "peer")]  # each system's rows
        + [("plot_forest", "results/plots/forest/builtin/2e")]  # new; not knob's, the sweep's arms' nor peer's
        + [("plot_heatmap", "results/plots/heatmap"), ("plot_latency", "results/plots/latency"),
           ("plot_gallery", "results/plots/index.html")])
    assert "plot_runtime" not in {r for r, _ in planned}  # written once

    run(work, "all")
    stems = [f"{kind}/{s}/{d}" for kind in ("arms", "transitions") for s in ("builtin", "peer")
             for d in ("gitds", "pathds")]  # plot_rows'
    stems += ["forest/builtin/2e", "heatmap", "latency", "quality-latency", "models"]  # (plot_latency's three)
    redrawn = {work / f"results/plots/{stem}{ext}" for stem in stems for ext in (".svg", ".png", ".html")}
    redrawn.add(work / "results/plots/index.html")
    after = {p: p.stat().st_mtime_ns for p in (work / "results/plots").rglob("*") if p.is_file()}
    assert set(after) - set(before) == {work / f"results/plots/forest/builtin/2e{ext}" for ext in (".svg", ".png",
                                                                                                  ".html")}
    assert sorted(p for p in before if after[p] != before[p]) == sorted(redrawn & set(before))
    # the other arms' forests and the sweep's grid keep their files untouched, as does the runtime
    kept = [work / f"results/plots/{stem}{ext}" for ext in (".svg", ".png", ".html")
            for stem in ("forest/builtin/knob", "forest/builtin/sparse-t20", "forest/builtin/sparse-t40",
                         "forest/peer/knob", "sweep/builtin/sparse",
                         # the systems compared read the baseline's runs, which an added arm leaves be
                         "leaderboard", "costs", "failures", "versus/peer")]
    kept.append(work / "results/plots/vega/vega-embed.js")
    assert sorted(p for p in before if after[p] == before[p]) == sorted(kept)
    # each run's event log is written by its own evaluation: the new runs', no other
    tracking = {p: p.stat().st_mtime_ns for p in (work / "results/tracking").rglob("*.jsonl")}
    assert sorted(set(tracking) - set(logged)) == [work / f"results/tracking/{d}/builtin/2e.jsonl"
                                                   for d in ("gitds", "pathds")]
    assert all(tracking[p] == t for p, t in logged.items())
    assert "Nothing to be done" in run(work, "-n", "all").stdout

    # a tracker named in the config: a job per run sends it (the evaluations are not redone)
    (work / "config.yaml").write_text(yaml.safe_dump({**added, "trackers": {"mlflow": {}}}))
    assert planned_rules(work) == ["all"] + ["track_run"] * len(tracking)


def test_a_declared_language_is_checked_at_the_fetch(matrix):
    work, cfg = matrix
    cfg = {**cfg, "corpora": {**cfg["corpora"], "gitc": {**cfg["corpora"]["gitc"], "language": "rust"}}}
    (work / "config.yaml").write_text(yaml.safe_dump(cfg))
    proc = run(work, "results/corpora/gitc/manifest.json", check=False)
    assert proc.returncode != 0
    assert ("crmatrix: corpora.gitc.language: declared rust, but the dominant language of the fetched tree is none "
            "(fewer than 3 source files: leave language out) (counts: {'python': 1})") in proc.stderr
    assert leftovers(work) == []


def test_a_key_given_twice_in_the_configfile_is_refused_naming_both_lines(matrix):
    """YAML keeps the last of a repeated key: an arm or a second `arms:` would silently replace
    the first. The `--configfile` Snakemake reads is read again by crmatrix, which refuses it."""
    work, cfg = matrix
    text = yaml.safe_dump(cfg, sort_keys=False)
    lines = text.splitlines()
    arms = lines.index("arms:")
    # the knob arm again, under another value, right after the first
    (work / "config.yaml").write_text("\n".join([*lines[:arms + 4], "  knob: {}", *lines[arms + 4:]]) + "\n")
    assert lines[arms + 2] == "  knob:"
    proc = run(work, "-n", "all", check=False)
    assert proc.returncode != 0
    assert proc.stderr.strip().splitlines()[-1] == (
        f"crmatrix: {work / 'config.yaml'}: line {arms + 5}, column 3: not valid YAML: key 'knob' is given twice in "
        f"one mapping (first on line {arms + 3}); YAML would keep only the last")
    assert not (work / "results").exists()
    # two top-level `arms:`
    (work / "config.yaml").write_text(text + "arms:\n  baseline: {}\n")
    proc = run(work, "-n", "all", check=False)
    assert proc.stderr.strip().splitlines()[-1] == (
        f"crmatrix: {work / 'config.yaml'}: line {len(lines) + 1}, column 1: not valid YAML: key 'arms' is given "
        f"twice in one mapping (first on line {arms + 1}); YAML would keep only the last")


def fetch_under_a_file_size_limit(work, limit: int, target: str) -> subprocess.CompletedProcess:
    """Snakemake (and so its jobs) under `ulimit -f`: a write past `limit` bytes fails with EFBIG."""
    import resource

    argv = [*snakemake_cmd(work), "--configfile", str(work / "config.yaml"), "--cores", "1", target]
    return subprocess.run(argv, capture_output=True, text=True, timeout=300,
                          preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit)))


def test_a_write_out_of_room_names_the_output_and_what_it_needed(matrix):
    """A full disk or a file size limit fails a write with an OSError naming no file; the job says
    which output, how much it needed, and the limit, in one line and nothing half-written."""
    work, _ = matrix
    big = "".join(f"function f{i}(x) {{\n  // helper number {i} of the big file\n  return x + {i};\n}}\n\n"
                  for i in range(3000))
    (work / "local/lib/big.js").write_text(big)
    assert len(big) == 242_670
    # the tree: its files copied one by one into a staging directory
    proc = fetch_under_a_file_size_limit(work, 128 * 1024, "results/corpora/pathc/manifest.json")
    assert proc.returncode != 0
    line = ("crmatrix: results/corpora/pathc/tree: ran out of room writing lib/big.js, after 131,072 bytes of it, and "
            "needs more: File too large (a file may hold at most 131,072 bytes here: the file size limit, "
            "ulimit -f); make room and run again")
    assert line in proc.stderr.splitlines()
    assert "Traceback" not in proc.stderr
    assert leftovers(work) == []
    # one file: its symbols, written whole or not at all
    proc = fetch_under_a_file_size_limit(work, 512 * 1024, "results/symbols/pathc.jsonl")
    assert proc.returncode != 0
    size = re.search(r"crmatrix: results/symbols/pathc\.jsonl: cannot write its ([\d,]+) bytes: File too large \(a "
                     r"file may hold at most 524,288 bytes here: the file size limit, ulimit -f\); make room and "
                     r"run again$", proc.stderr, flags=re.M)
    assert size and int(size.group(1).replace(",", "")) > 512 * 1024
    assert "Traceback" not in proc.stderr
    assert not (work / "results/symbols/pathc.jsonl").exists()
    assert not list((work / "results/symbols").glob(".pathc.jsonl.*"))
    run(work, "results/symbols/pathc.jsonl")  # room again: it runs


def test_a_dataset_file_older_than_its_outputs_but_other_content_reruns_its_dataset(matrix):
    """Snakemake sees mtimes: an older copy of a dataset file restored over a newer one
    (`cp -p`, a checkout of an older revision) is older than the outputs made from the newer,
    and only the file's content, a parameter of every rule reading it, tells them apart."""
    work, _ = matrix
    target = "results/runs/gitds/builtin/baseline.json"
    run(work, target)
    made = (work / "results/datasets/gitds.jsonl").stat().st_mtime
    (work / "ds" / "gitds.json").write_text(json.dumps(GIT_DATASET[:2]))
    os.utime(work / "ds" / "gitds.json", (made - 3600, made - 3600))
    assert planned_rules(work, target) == ["evaluate_arm", "grep_baseline", "prepare_dataset"]
    run(work, target)
    assert [t["query"] for t in map(json.loads, (work / "results/datasets/gitds.jsonl").read_text().splitlines())] \
        == ["parse config", "Store"]
    r = json.loads((work / target).read_text())
    assert r["methods"]["lexical"]["metrics"]["n"] == 2
    assert "Nothing to be done" in run(work, "-n", target).stdout


@pytest.mark.slow
def test_a_matrix_of_one_arm_says_what_is_absent_and_draws_no_empty_chart(matrix):
    """Only `baseline`: no heatmap and no transitions are planned or drawn (the gallery says why),
    and the matrix's MDE and "what this matrix can tell" say there is nothing to compare."""
    work, cfg = matrix
    (work / "config.yaml").write_text(yaml.safe_dump({**cfg, "arms": {"baseline": {}}}))
    rules = planned_rules(work)
    assert "plot_heatmap" not in rules and "plot_forest" not in rules and "plot_rows" in rules
    run(work, "all")
    plots = work / "results/plots"
    assert sorted(p.relative_to(plots).as_posix() for p in plots.rglob("*.svg")) == [
        "arms/builtin/gitds.svg", "arms/builtin/pathds.svg", "costs.svg", "failures.svg", "latency.svg",
        "leaderboard.svg", "models.svg", "quality-latency.svg"]
    page = (plots / "index.html").read_text()
    assert "Not drawn: heatmap, transitions and forests — the matrix has one arm, baseline: no arm is compared " \
           "with it, so there is no Δ to draw." in page
    md = (work / "results/matrix/phase-matrix.md").read_text()
    said = ("The matrix has one arm, `baseline`: no arm is compared with it, so there is no Δ, test, MDE or pooled "
            "verdict")
    assert md.count(said) == 2 and "## What this matrix can tell\n\n" + said in md
    assert "| gitds | builtin | lexical | python | 3 | — | " in md and "0 dataset rows" not in page
