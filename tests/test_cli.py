"""The `crmatrix` command: one evaluation outside Snakemake, config validation, CI gates."""

import json
import subprocess
import sys

import fixture_runs
import pytest
import yaml
from conftest import BIN, ROOT, tiny_project
from test_graph_workflow import CORPUS as GRAPH_CORPUS
from test_graph_workflow import OFF

CLI = [str(BIN / "crmatrix")]


def crmatrix(*args, cwd=None):
    return subprocess.run([*CLI, *args], capture_output=True, text=True, cwd=cwd, timeout=300)


def test_run_on_a_directory_writes_a_run(tmp_path):
    src, ds, cfg = tiny_project(tmp_path, "def slugify(title):\n    return title.lower()\n\n\nclass Cache:\n    pass\n")
    out = tmp_path / "run.json"
    proc = crmatrix("run", "--corpus", str(src), "--dataset", str(ds), "--config", str(cfg), "--arm", "2e",
                    "--methods", "lexical,bm25", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "lexical   mrr 1.000" in proc.stdout
    run = json.loads(out.read_text())
    assert run["arm"] == "2e" and run["provenance"]["arm"]["env"] == {"CODELENS_RANK_SPARSE_TERM_WEIGHT": "1"}
    assert run["methods"]["lexical"]["queries"][0]["rank"] == 1

    bad = crmatrix("run", "--corpus", str(src), "--dataset", str(ds), "--config", str(cfg), "--arm", "nope")
    assert bad.returncode == 2
    assert bad.stderr.strip() == "crmatrix: --arm 'nope' is not an arm of the config (known: baseline, 2e)"


def one_cell(tmp_path, rows):
    """A corpus directory, a dataset file of `rows` and a config of two arms, the builtin's lexical method."""
    src = tmp_path / "proj"
    (src / "lib").mkdir(parents=True)
    (src / "lib" / "util.py").write_text("def slugify(title):\n    return title.lower()\n")
    ds = tmp_path / "ds.json"
    ds.write_text(json.dumps(rows))
    cfg = tmp_path / "m.yaml"
    cfg.write_text(yaml.safe_dump({"arms": {"baseline": {}, "2e": {"CODELENS_RANK_SPARSE_TERM_WEIGHT": "1"}},
                                   "systems": {"builtin": {"type": "builtin", "methods": ["lexical"]}}},
                                  sort_keys=False))
    return src, ds, cfg


SLUGIFY = {"query": "slugify", "expected_symbol": "slugify", "expected_file_suffix": "lib/util.py",
           "query_type": "identifier"}


def test_run_is_the_workflows_run_of_the_cell(tmp_path):
    """`crmatrix run` asks the workflow for the cell's run: the same run a matrix of that one cell
    makes (its provenance, parameters' hash included, and its ranks), and nothing left behind."""
    src, ds, cfg = one_cell(tmp_path, [SLUGIFY])
    out = tmp_path / "cli.json"
    proc = crmatrix("run", "--corpus", str(src), "--dataset", str(ds), "--config", str(cfg), "--arm", "2e",
                    "--cache-dir", str(tmp_path / "cache"), "--out", str(out), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    # nothing left behind but the run asked for and the cache directory it names (if anything was cached)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "cache") == ["cli.json", "ds.json", "m.yaml", "proj"]
    work = tmp_path / "work"
    work.mkdir()
    matrix = tmp_path / "one.yaml"
    matrix.write_text(yaml.safe_dump({**yaml.safe_load(cfg.read_text()), "cache_dir": str(tmp_path / "cache"),
                                      "corpora": {"proj": {"path": str(src), "include": ["**"], "exclude": []}},
                                      "datasets": {"ds": {"file": str(ds), "corpus": "proj", "format": "codelens"}}},
                                     sort_keys=False))
    smk = subprocess.run([sys.executable, "-m", "snakemake", "results/runs/ds/builtin/2e.json", "--cores", "1",
                          "--snakefile", str(ROOT / "Snakefile"), "--directory", str(work), "--configfile",
                          str(matrix)], capture_output=True, text=True, timeout=600)
    assert smk.returncode == 0, smk.stderr[-3000:]
    cli, made = json.loads(out.read_text()), json.loads((work / "results/runs/ds/builtin/2e.json").read_text())
    assert cli["provenance"] == made["provenance"]
    assert [q["rank"] for q in cli["methods"]["lexical"]["queries"]] == [1]


def test_a_failed_job_of_run_is_its_one_line_error(tmp_path):
    src, ds, cfg = one_cell(tmp_path, [{**SLUGIFY, "expected_file_suffix": "lib/missing.py"}])
    proc = crmatrix("run", "--corpus", str(src), "--dataset", str(ds), "--config", str(cfg), "--arm", "baseline",
                    "--cache-dir", str(tmp_path / "cache"), cwd=tmp_path)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr.splitlines() == [f"crmatrix: {ds}: row 0: field 'expected_file_suffix' 'lib/missing.py' "
                                        "matches no file of corpus 'proj'"]


def test_run_of_a_graph_expansion_arm_builds_the_graph_its_plan_names(tmp_path):
    """`get` calls `read_page`: a short query finds `get` alone, and only one-hop expansion over
    the corpus's graph (which `crmatrix run` extracts because the arm's plan names it) adds its callee."""
    src = tmp_path / "proj"
    for rel, text in GRAPH_CORPUS.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text)
    ds = tmp_path / "ds.json"
    ds.write_text(json.dumps([{"query": "value lookup", "expected_symbol": "read_page",
                               "expected_file_suffix": "store.py", "query_type": "natural_language"}]))
    cfg = tmp_path / "m.yaml"
    cfg.write_text(yaml.safe_dump({"arms": {"baseline": OFF, "graph-expand": {**OFF, "CRMATRIX_GRAPH_EXPAND": "1"}},
                                   "systems": {"builtin": {"type": "builtin", "methods": ["hybrid"]}}}))
    runs = {}
    for arm in ("baseline", "graph-expand"):
        out = tmp_path / f"{arm}.json"
        proc = crmatrix("run", "--corpus", str(src), "--dataset", str(ds), "--config", str(cfg), "--arm", arm,
                        "--cache-dir", str(tmp_path / "cache"), "--out", str(out))
        assert proc.returncode == 0, proc.stderr
        runs[arm] = json.loads(out.read_text())
    found = {arm: [(q["rank"], q["hits"], q["top_candidate"]["symbol"]) for q in r["methods"]["hybrid"]["queries"]]
             for arm, r in runs.items()}
    assert found == {"baseline": [(None, 1, "get")], "graph-expand": [(2, 2, "get")]}
    assert [r["provenance"]["system_run"]["knobs"]["graph_expand"] for r in runs.values()] == [False, True]


def test_validate_names_the_bad_key(tmp_path):
    assert crmatrix("validate", str(ROOT / "config" / "config.yaml")).stdout.startswith(
        f"{ROOT / 'config' / 'config.yaml'}: ok (")
    cfg = tmp_path / "bad.yaml"
    cfg.write_text("corpora: {c: {path: x}}\ndatasets: {d: {file: f, corpus: c}}\narms: {baseline: {A: 1}}\n")
    proc = crmatrix("validate", str(cfg))
    assert proc.returncode == 2
    assert proc.stderr.strip() == (f"crmatrix: {cfg}: arms.baseline.A: expected string, got an integer 1 "
                                   "(quote it in YAML)")


def test_check_gates_exit_one_and_name_the_failure(tmp_path):
    path = fixture_runs.write(tmp_path / "run.json", fixture_runs.gated({"hybrid": {
        "metrics": {"mrr": 0.42, "n": 3}, "latency_ms": {"p50": 3.0, "p95": 9.0, "p99": 12.0}}}))
    ok = crmatrix("check", str(path), "--min", "hybrid.mrr=0.4", "--max", "hybrid.latency_p95_ms=250")
    assert ok.returncode == 0 and "2 of 2 gates passed" in ok.stdout
    fail = crmatrix("check", str(path), "--min", "hybrid.mrr=0.5", "--max", "hybrid.latency_p95_ms=5")
    assert fail.returncode == 1
    assert fail.stdout.splitlines()[:2] == ["FAIL hybrid.mrr = 0.42 < min 0.5",
                                            "FAIL hybrid.latency_p95_ms = 9 > max 5"]
    assert crmatrix("check", str(path), "--min", "hybrid.mrr").returncode == 2


def test_check_a_metric_no_run_has_is_a_usage_error_with_a_did_you_mean(tmp_path):
    path = fixture_runs.write(tmp_path / "run.json", fixture_runs.gated({"hybrid": {"metrics": {"mrr": 0.42, "n": 3}}}))
    known = ("n, mrr, mrr@10, acc@1, acc@3, acc@5, precision@1, recall@5, recall@10, recall@100, ndcg@10, map, map@10, "
             "coverage")
    proc = crmatrix("check", str(path), "--min", "hybrid.mmr=0.5")
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == (f"crmatrix: min gate 'hybrid.mmr=0.5': unknown metric 'mmr' (did you mean 'mrr'? expected "
                           f"one of: {known}, latency_p50_ms, latency_p95_ms, latency_p99_ms)\n")
    # latency is the method's, not a query type's
    proc = crmatrix("check", str(path), "--max", "hybrid.identifier.latency_p95_ms=9")
    assert proc.returncode == 2
    assert proc.stderr == (f"crmatrix: max gate 'hybrid.identifier.latency_p95_ms=9': unknown metric "
                           f"'latency_p95_ms' (expected one of: {known})\n")


def test_validate_finds_a_program_missing_from_path_before_any_query(tmp_path):
    cfg = tmp_path / "peer.yaml"
    (tmp_path / "x").mkdir()  # the files it names are there (validate checks them first)
    (tmp_path / "f").write_text("[]")
    head = (f"corpora: {{c: {{path: {tmp_path / 'x'}}}}}\ndatasets: {{d: {{file: {tmp_path / 'f'}, corpus: c}}}}\n"
            "arms: {baseline: {}}\nsystems:\n")
    cfg.write_text(head + "  peer: {type: command, options: {search: [no-such-search-tool, '{query}']}}\n")
    proc = crmatrix("validate", str(cfg))
    assert proc.returncode == 2
    assert proc.stderr == (f"crmatrix: {cfg}: systems.peer.options.search[0]: 'no-such-search-tool' is not a program "
                           "on PATH, and the system installs nothing (expected an executable on PATH, its absolute "
                           "path, or install: {pip: NAME==VERSION})\n")
    cfg.write_text(head + "  peer: {type: mcp, options: {server: [/no/such/server], tool: t}}\n")
    assert "systems.peer.options.server[0]: '/no/such/server' is not a program" in crmatrix("validate", str(cfg)).stderr
    # on PATH, or installed by the workflow (its bin directory is known when the job runs): fine
    cfg.write_text(head + "  peer: {type: command, options: {search: [sh, -c, 'echo {query}']}}\n"
                   "  installed: {type: command, install: {pip: peer==1.0},\n"
                   "              options: {search: ['{bin}/peer', '{query}']}}\n")
    assert crmatrix("validate", str(cfg)).returncode == 0


def test_validate_names_a_file_or_directory_the_config_names_that_is_not_there(tmp_path, capsys, monkeypatch):
    from crmatrix import config
    from crmatrix.cli import main

    monkeypatch.chdir(tmp_path)  # relative paths are the working directory's, as the workflow's
    cfg = tmp_path / "gone.yaml"
    raw = {"corpora": {"c": {"path": "src"}}, "datasets": {"d": {"file": "ds.json", "corpus": "c"}},
           "arms": {"baseline": {}}}
    cfg.write_text(yaml.safe_dump(raw))
    config.from_dict(raw)  # the Matrix itself asks nothing of the disk
    assert main(["validate", str(cfg)]) == 2
    assert capsys.readouterr().err == f"crmatrix: {cfg}: datasets.d.file: 'ds.json' is not a file (from {tmp_path})\n"
    (tmp_path / "ds.json").write_text("[]")
    assert main(["validate", str(cfg)]) == 2
    assert capsys.readouterr().err == f"crmatrix: {cfg}: corpora.c.path: 'src' is not a directory (from {tmp_path})\n"
    (tmp_path / "src").mkdir()
    assert main(["validate", str(cfg)]) == 0


def _without(doc: dict, *path) -> dict:
    """`doc` with the key at `path` removed."""
    doc = json.loads(json.dumps(doc))
    *parents, last = path
    inner = doc
    for k in parents:
        inner = inner[k]
    del inner[last]
    return doc


RUN = fixture_runs.run("alpha", "baseline", [1, 2], "python")
RANK_AS_TEXT = json.loads(json.dumps(RUN).replace('"rank": 1,', '"rank": "1",', 1))


@pytest.mark.parametrize("doc,why", [
    ([], "not a crmatrix run (expected an object, got a list)"),
    (RUN, "no 'checksum' (written by an older crmatrix, or not by crmatrix), so what it holds cannot be checked; "
          "delete the run file and run again"),
    (fixture_runs.sealed({"methods": {}}), "not a crmatrix run (no dataset, system, arm, top_k, prepare_s, "
                                           "provenance)"),
    (fixture_runs.sealed(_without(RUN, "methods", "hybrid", "metrics")), "not a crmatrix run (methods.hybrid: no "
                                                                         "metrics)"),
    (fixture_runs.sealed(RANK_AS_TEXT), "not a crmatrix run (methods.hybrid.queries[0].rank: expected an integer or "
                                        "null, got a string)"),
    (fixture_runs.sealed({**RUN, "ranks": []}), "not a crmatrix run (unknown key 'ranks' (expected: arm, dataset, "
                                                 "methods, prepare_s, provenance, system, top_k))"),
])
def test_check_of_a_json_that_is_not_a_run_is_one_line(tmp_path, capsys, doc, why):
    from crmatrix.cli import main

    path = tmp_path / "x.json"
    path.write_text(json.dumps(doc))
    assert main(["check", str(path), "--min", "hybrid.mrr=0.5"]) == 2
    err = capsys.readouterr().err
    assert err == f"crmatrix: {path}: {why}\n"


@pytest.mark.parametrize("gate", ["hybrid.mrr=nan", "hybrid.mrr=-inf", "hybrid.mrr=1e999", "hybrid.mrr=NaN"])
def test_check_rejects_a_bound_that_is_not_finite(tmp_path, capsys, gate):
    from crmatrix.cli import main

    path = tmp_path / "run.json"
    path.write_text(json.dumps({"methods": {"hybrid": {"metrics": {"mrr": 0.42}}}}))
    assert main(["check", str(path), "--max", gate]) == 2
    assert capsys.readouterr().err == (f"crmatrix: max gate {gate!r}: expected METHOD.METRIC=NUMBER or "
                                       "METHOD.QUERY_TYPE.METRIC=NUMBER (e.g. hybrid.mrr=0.5)\n")


def test_check_names_a_gated_value_the_run_lacks_or_that_is_no_number(tmp_path, capsys):
    from crmatrix.cli import main

    path = fixture_runs.write(tmp_path / "run.json", fixture_runs.gated({"hybrid": {
        "metrics": {"mrr": None, "acc@1": float("nan")}}}))
    assert main(["check", str(path), "--min", "hybrid.mrr=0.5", "--min", "hybrid.acc@1=0.3",
                 "--max", "hybrid.latency_p95_ms=250"]) == 1
    assert capsys.readouterr().out.splitlines() == [
        "FAIL hybrid.mrr: not scored (a blob system is scored at rank 1 only)",
        "FAIL hybrid.acc@1: the run holds nan, not a number",
        "FAIL hybrid.latency_p95_ms: not in the run (no latency_ms.p95)",
        f"{path}: 0 of 3 gates passed",
    ]


def test_validate_warns_of_each_clamped_value_and_passes(tmp_path, capsys):
    from crmatrix.cli import main

    cfg = tmp_path / "wide.yaml"
    (tmp_path / "x").mkdir()
    (tmp_path / "f").write_text("[]")
    cfg.write_text(f"corpora: {{c: {{path: {tmp_path / 'x'}}}}}\n"
                   f"datasets: {{d: {{file: {tmp_path / 'f'}, corpus: c}}}}\narms:\n  baseline: {{}}\n"
                   "  wide: {CODELENS_RANK_SPARSE_THRESHOLD: '500', CODELENS_EMBED_HINT_LINES: '0'}\n")
    assert main(["validate", str(cfg)]) == 0
    out = capsys.readouterr()
    assert out.err.splitlines() == [
        f"crmatrix: warning: {cfg}: arms.wide: CODELENS_EMBED_HINT_LINES=0 clamped to 1",
        f"crmatrix: warning: {cfg}: arms.wide: CODELENS_RANK_SPARSE_THRESHOLD=500 clamped to 90",
    ]
    assert out.out == f"{cfg}: ok (1 corpora, 1 datasets, 1 systems, 2 arms)\n"


@pytest.mark.parametrize("text,says", [
    ("", "the file is empty (or only comments): expected a matrix config, `key: value` lines such as corpora:, "
         "datasets:, arms:, systems:"),
    ("# just a comment\n", "the file is empty (or only comments): expected a matrix config, `key: value` lines such "
                           "as corpora:, datasets:, arms:, systems:"),
    ("corpora:\n\tc: {path: x}\n", "line 2, column 1: not valid YAML: while scanning for the next token found "
                                   "character '\\t' that cannot start any token (YAML indents with spaces, never "
                                   "tabs)"),
    ("- corpora\n- arms\n", "expected `key: value` lines at the top level (corpora:, datasets:, ...), got a list"),
    ("corpora: {c: {path: x}\narms: {}\n", "line 2, column 1: not valid YAML: while parsing a flow mapping expected "
                                           "',' or '}', but got '<scalar>'"),
    ("arms:\n  baseline: {}\ncorpora: {}\narms:\n  other: {}\n",
     "line 4, column 1: not valid YAML: key 'arms' is given twice in one mapping (first on line 1); YAML would keep "
     "only the last"),
    ("arms:\n  a: &off {X: '0'}\n  b:\n    <<: *off\n    X: '1'\n  a: {}\n",  # a merged key set again is no repeat
     "line 6, column 3: not valid YAML: key 'a' is given twice in one mapping (first on line 2); YAML would keep "
     "only the last"),
    ('{"arms": {"a": {}, "a": {}}}', "not valid JSON config: key 'a' is given twice in one object; JSON would keep "
                                     "only the last"),
])
def test_validate_says_what_is_wrong_with_a_config_file_snakemake_cannot_name(tmp_path, text, says):
    """What `make run CONFIG=FILE` and the docs run before `snakemake ... --configfile FILE`, whose
    loader says "Config file is not valid JSON or YAML" or "... keys at top level" naming neither
    file nor line, and keeps the last of a repeated key."""
    cfg = tmp_path / "mine.yaml"
    cfg.write_text(text)
    proc = crmatrix("validate", str(cfg))
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == f"crmatrix: {cfg}: {says}\n"


def test_make_run_with_a_bad_config_stops_at_validate_with_its_line(tmp_path):
    cfg = tmp_path / "mine.yaml"
    cfg.write_text("")
    proc = subprocess.run(["make", "-f", str(ROOT / "Makefile"), "-o", f"{BIN.parent}/.installed", f"VENV={BIN.parent}",
                           f"CONFIG={cfg}", "run"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert f"crmatrix: {cfg}: the file is empty (or only comments)" in proc.stderr
    assert "snakemake" not in proc.stdout.replace(f"{BIN.parent}/bin/crmatrix", "")


def show(tmp_path, fmt, rows_text):
    """`crmatrix dataset show FMT FILE` of `rows_text` against a one-file corpus."""
    (tmp_path / "src" / "pkg").mkdir(parents=True, exist_ok=True)
    (tmp_path / "src" / "pkg" / "core.py").write_text("def parse_config(text):\n    return text\n\n\n"
                                                      "def load(path):\n    return parse_config(path)\n")
    (tmp_path / "ds.json").write_text(rows_text)
    return crmatrix("dataset", "show", fmt, str(tmp_path / "ds.json"), "--corpus", str(tmp_path / "src"))


ROW = {"query": "parse config", "expected_symbol": "parse_config", "expected_file_suffix": "pkg/core.py"}


def test_a_misspelled_field_of_a_hand_built_row_is_an_error_with_the_field_meant(tmp_path):
    """Left unread, `query_tpye` would make the query `uncategorized` without a word."""
    proc = show(tmp_path, "codelens", json.dumps([ROW, {**ROW, "query": "load", "query_tpye": "identifier"}]))
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == (f"crmatrix: {tmp_path / 'ds.json'}: row 1: unknown field 'query_tpye' (did you mean "
                           "'query_type'? the format's fields: expected_file_suffix, expected_symbol, query, "
                           "query_type)\n")
    proc = show(tmp_path, "callgraph", json.dumps([{"caller": "load", "callee": "parse_config", "file": "core.py",
                                                    "note": "direct"}]))
    assert proc.stderr == (f"crmatrix: {tmp_path / 'ds.json'}: row 0: unknown field 'note' (the format's fields: "
                           "callee, caller, file)\n")


def test_an_empty_dataset_file_or_a_jsonl_one_says_so(tmp_path):
    proc = show(tmp_path, "codelens", "")
    assert (proc.returncode, proc.stderr) == (2, f"crmatrix: {tmp_path / 'ds.json'}: the file is empty: expected a "
                                                 "JSON list of objects, [{...}, {...}]\n")
    proc = show(tmp_path, "codelens", "".join(json.dumps(r) + "\n" for r in (ROW, {**ROW, "query": "load"})))
    assert (proc.returncode, proc.stderr) == (
        2, f"crmatrix: {tmp_path / 'ds.json'}: line 2: a second JSON value: the file is JSONL (one value per line), "
           "but this format reads one JSON document: expected a JSON list of objects, [{...}, {...}]\n")
    proc = show(tmp_path, "repoqa", "  \n")
    assert proc.stderr == (f"crmatrix: {tmp_path / 'ds.json'}: the file is empty: expected an object of language -> "
                           "list of repositories (RepoQA's shape)\n")
    # broken JSON that is no JSONL keeps the parser's words
    proc = show(tmp_path, "codelens", '[{"query": "x",\n')
    assert proc.stderr.startswith(f"crmatrix: {tmp_path / 'ds.json'}: not readable as JSON: Expecting")
