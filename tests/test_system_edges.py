"""The rough edges a user met putting their own tools into a matrix (issue 19), each through
Snakemake with the fakes of tests/fakes (the systems are in `_config`).

One matrix is run once (module fixture); each test reads what it needs from it, or plans a
changed config against it with a dry run."""

import json
import re
import shutil
import sys
from pathlib import Path

import pytest
import yaml
from conftest import snakemake
from test_systems import CORPUS, DATASET, FAKES, HITS, alive

pytestmark = pytest.mark.slow


def _config(tmp_path: Path) -> dict:
    script = str(tmp_path / "tools" / "fake_search.py")  # the project's own script: part of the keys
    cli = [sys.executable, script]
    indexed = {"index": [*cli, "index", "{corpus}", "{index}"], "search": [*cli, "search", "{index}", "{query}", "{k}"],
               "index_env": []}
    return {
        "corpora": {"fake": {"path": "src"}},
        "datasets": {"ds": {"file": "ds.json", "corpus": "fake"}},
        "systems": {
            "cli": {"type": "command", "timeout_s": 20, "options": {
                **indexed, "env": {"FAKE_INDEX_IN_HOME": "1", "FAKE_MODE": "crash-on:parse"}, **HITS}},
            "nohit": {"type": "command", "options": {  # from the second answer on, files by their name alone
                **indexed, "env": {"FAKE_MODE": "basename-on:value|basename-on:delete"}, **HITS}},
            "server": {"type": "mcp", "timeout_s": 20, "options": {
                "server": [sys.executable, str(FAKES / "fake_mcp_server.py"), "{corpus}"], "tool": "search",
                "args": {"query": "{query}", "k": "{k}"},
                "env": {"FAKE_SERVER_CHILD": "1", "FAKE_MODE": "exit-with-child-on:parse"}, **HITS}},
        },
        "arms": {"baseline": {}},
        "headline_method": "search",
    }


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("edges")
    for rel, text in CORPUS.items():
        (tmp_path / "src" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "src" / rel).write_text(text)
    (tmp_path / "tools").mkdir()
    shutil.copy(FAKES / "fake_search.py", tmp_path / "tools" / "fake_search.py")
    (tmp_path / "ds.json").write_text(json.dumps(DATASET))
    cfg = _config(tmp_path)
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(cfg))
    # each test checks its own part: a job failing here fails the tests that read it, not all of them
    proc = snakemake(tmp_path, "--cores", "2", "--keep-going", "all", "--configfile", str(tmp_path / "config.yaml"),
                     check=False)
    return tmp_path, cfg, proc


def test_the_matrix_runs(project):
    assert project[2].returncode == 0, project[2].stderr


def run_of(project, system: str) -> dict:
    return json.loads((project[0] / f"results/runs/ds/{system}/baseline.json").read_text())["methods"]["search"]


def planned(project, cfg: dict) -> dict[str, int]:
    """Rule -> how many jobs a dry run of `all` under `cfg` plans in the project."""
    path = project[0] / "changed.yaml"
    path.write_text(yaml.safe_dump(cfg))
    out = snakemake(project[0], "--cores", "1", "-n", "all", "--configfile", str(path)).stdout
    return {m[1]: int(m[2]) for m in re.finditer(r"^(\w+)\s+(\d+)$", out, flags=re.M) if m[1] != "total"}


def row(project, system: str) -> str:
    md = (project[0] / "results/matrix/phase-matrix.md").read_text()
    return next(line for line in md.splitlines() if line.startswith(f"| ds | {system} |"))


def test_a_query_time_change_re_runs_the_queries_but_not_the_index(project):
    cfg = json.loads(json.dumps(project[1]))
    cli = cfg["systems"]["cli"]
    cli["timeout_s"], cli["budget_s"] = 25, 900
    cli["options"]["search"] = [*cli["options"]["search"], "--ignored"]
    jobs = planned(project, cfg)
    assert "build_system_index" not in jobs
    assert jobs["evaluate_arm"] == 1


def test_the_index_job_and_the_query_jobs_share_a_home(project):
    # the CLI keeps its index under $HOME: its queries find it only in the index job's HOME
    assert [(q["failure"], q["rank"]) for q in run_of(project, "cli")["queries"]] == [
        ("crash", None), (None, 1), (None, 1), (None, 1)]


def test_editing_a_project_script_the_argv_names_re_runs_what_it_served(project):
    script = project[0] / "tools" / "fake_search.py"
    text = script.read_text()
    try:
        script.write_text(text + "\n# edited\n")
        jobs = planned(project, project[1])
    finally:
        script.write_text(text)
    indexed = [s for s, conf in project[1]["systems"].items() if "index" in conf["options"]]
    # the systems whose index command runs the script: their index and run (a server's, not)
    assert jobs["build_system_index"] == jobs["evaluate_arm"] == len(indexed) >= 1
    assert planned(project, project[1]) == {}


def test_no_child_of_an_mcp_server_outlives_the_run(project):
    children = [int(p.read_text()) for p in (project[0] / "results/home/server").rglob("child-*.pid")]
    # one per server start (the first, and the restart after the exit) and the one left holding stdout
    assert len(children) == 3
    assert not [pid for pid in children if alive(pid)]


def test_a_server_exiting_while_its_child_holds_stdout_is_a_crash_with_its_exit_status(project):
    queries = run_of(project, "server")["queries"]
    assert (queries[0]["failure"], queries[0]["error"]) == (
        "crash", "search: server exited with status 3 during the call; "
                 "server stderr: fake_mcp_server: exiting on 'parse config'")
    assert queries[0]["elapsed_ms"] < 10_000  # not the query's timeout of 20 s
    assert [q["rank"] for q in queries[1:]] == [1, 1, 1]
    assert row(project, "server").rstrip().endswith("⚠ 1 failed (1 crash) |")


def test_a_server_that_never_answers_initialize_says_so(project):
    tmp_path, cfg, _ = project
    cfg = json.loads(json.dumps(cfg))
    cfg["systems"]["mute"] = {"type": "mcp", "options": {**cfg["systems"]["server"]["options"],
                                                         "env": {"FAKE_NO_INIT": "1"}, "start_timeout_s": 2}}
    (tmp_path / "mute.yaml").write_text(yaml.safe_dump(cfg))
    # the message's "within 2 s" is the start timeout applied; no wall-clock bound (a loaded machine)
    proc = snakemake(tmp_path, "--cores", "1", "results/runs/ds/mute/baseline.json", "--configfile",
                     str(tmp_path / "mute.yaml"), check=False)
    assert proc.returncode != 0
    assert re.search(r"^crmatrix: mcp system 'mute' on dataset 'ds', arm 'baseline': MCP server \[.*\] did not "
                     r"start: server: did not answer initialize within 2 s$", proc.stderr, flags=re.M), proc.stderr
    assert "ExceptionGroup" not in proc.stderr


def test_an_mcp_tool_the_server_does_not_list_stops_its_job_in_one_line_naming_its_tools(project):
    tmp_path, cfg, _ = project
    cfg = json.loads(json.dumps(cfg))
    cfg["systems"]["typo"] = {"type": "mcp", "options": {**cfg["systems"]["server"]["options"], "tool": "serch"}}
    (tmp_path / "typo.yaml").write_text(yaml.safe_dump(cfg))
    proc = snakemake(tmp_path, "--cores", "1", "results/runs/ds/typo/baseline.json", "--configfile",
                     str(tmp_path / "typo.yaml"), check=False)
    assert proc.returncode != 0
    line = ("crmatrix: mcp system 'typo' on dataset 'ds', arm 'baseline': the server lists no tool 'serch' (did you "
            "mean 'search'?); its tools: search\n")
    assert line in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert line in (tmp_path / "logs/evaluate_arm/ds/typo/baseline.log").read_text()
    assert not list((tmp_path / "results/home/typo").rglob("last-env.json"))  # no query was asked


def test_answers_resolving_no_hit_warn_and_mark_the_cell(project):
    result = run_of(project, "nohit")
    assert (result["no_hit"], result["no_hit_warning"], result["errors"]) == (3, True, 0)
    assert result["failures"] == {"bad-output": 0, "budget": 0, "crash": 0, "empty": 0, "timeout": 0}
    assert run_of(project, "cli")["no_hit"] == 0 and not run_of(project, "cli")["no_hit_warning"]
    warning = "crmatrix: run ds/nohit/baseline: ⚠ 3 answers resolved no hit (method search: "
    assert warning in project[2].stderr
    assert row(project, "nohit").rstrip().endswith("<br>⚠ 3 answers resolved no hit |")
    assert "answers resolved no hit" not in row(project, "cli")


def test_each_run_says_its_failures_in_one_line_on_the_terminal_and_in_its_log(project):
    line = ("run ds/cli/baseline: 1 of 4 queries failed (1 crash); the first: search: exit status 3: "
            "fake_search: crashing on 'parse config'")
    assert f"crmatrix: {line}\n" in project[2].stderr
    assert f"WARNING crmatrix.terminal: {line}\n" in (project[0] / "logs/evaluate_arm/ds/cli/baseline.log").read_text()
    assert "crmatrix: run ds/nohit/baseline: 4 queries, none failed\n" in project[2].stderr


def test_index_timeout_s_beside_timeout_s_says_it_goes_under_options(project):
    cfg = json.loads(json.dumps(project[1]))
    cfg["systems"]["cli"]["index_timeout_s"] = 600
    path = project[0] / "misplaced.yaml"
    path.write_text(yaml.safe_dump(cfg))
    proc = snakemake(project[0], "--cores", "1", "-n", "all", "--configfile", str(path), check=False)
    assert proc.returncode != 0
    assert ("systems.cli: unknown key 'index_timeout_s': it is an option of the system's type, so it goes under "
            "options (systems.cli.options.index_timeout_s)") in proc.stderr + proc.stdout
