"""External systems through `crmatrix.stages.evaluate_arm`: the command adapter on a fake
CLI, the mcp adapter on a fake MCP server, and an in-process plugin that hangs.

The fakes (tests/fakes/) misbehave on demand through FAKE_MODE, an arm variable, so one
corpus and one dataset exercise every failure kind."""

import hashlib
import json
import sys
import time
from pathlib import Path

import fixture_runs
import pytest

from crmatrix import CrmatrixError, config
from crmatrix.config.matrix import Matrix
from crmatrix.config.plan import Plan
from crmatrix.config.settings import SystemSpec
from crmatrix.evaluation.cell import CellJob
from crmatrix.hits import Hit
from crmatrix.stages import (
    build_system_index,
    collect_matrix,
    evaluate_arm,
    extract_symbols,
    fetch_corpus,
    prepare_dataset,
)
from crmatrix.systems import isolation
from crmatrix.systems import registry as systems

FAKES = Path(__file__).parent / "fakes"
FAKE_CLI = [sys.executable, str(FAKES / "fake_search.py")]
FAKE_MCP = [sys.executable, str(FAKES / "fake_mcp_server.py"), "{corpus}"]
CORPUS = {
    "pkg/config.py": "def parse_config(text):\n    return dict(line.split('=') for line in text.splitlines())\n",
    "pkg/store.py": (
        "class Store:\n"
        "    def save_value(self, key, value):\n        self.data[key] = value\n\n"
        "    def load_value(self, key):\n        return self.data[key]\n\n"
        "    def delete_key(self, key):\n        del self.data[key]\n"
    ),
}
DATASET = [
    {"query": "parse config", "expected_symbol": "parse_config", "expected_file_suffix": "pkg/config.py",
     "query_type": "short_phrase"},
    {"query": "save value", "expected_symbol": "save_value", "expected_file_suffix": "pkg/store.py",
     "query_type": "short_phrase"},
    {"query": "load value", "expected_symbol": "load_value", "expected_file_suffix": "pkg/store.py",
     "query_type": "natural_language"},
    {"query": "delete key", "expected_symbol": "delete_key", "expected_file_suffix": "pkg/store.py",
     "query_type": "identifier"},
]
HITS = {"hits": "data.symbols[]", "fields": {"symbol": "name", "path": "file", "start_line": "line"}}
INDEXED = {"index": [*FAKE_CLI, "index", "{corpus}", "{index}"],
           "search": [*FAKE_CLI, "search", "{index}", "{query}", "{k}"], **HITS}


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    """Corpus tree, manifest, symbols and tasks, made once through the pipeline's own stages."""
    root = tmp_path_factory.mktemp("corpus")
    src = root / "src"
    for rel, text in CORPUS.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text)
    (root / "ds.json").write_text(json.dumps(DATASET))
    fetch_corpus.run("fake", {"path": str(src), "include": ["**"], "exclude": []}, root / "tree",
                     root / "manifest.json", [], {})
    extract_symbols.run(root / "tree", root / "manifest.json", root / "symbols.jsonl")
    prepare_dataset.run(root / "ds.json", "codelens", "fake", root / "manifest.json", root / "symbols.jsonl",
                        root / "tasks.jsonl")
    return root


def system_matrix(type_: str, options: dict, **keys) -> Matrix:
    """A matrix of one system, `fake`."""
    return config.from_dict({"corpora": {"c": {"path": "."}}, "datasets": {"d": {"file": "d.json", "corpus": "c"}},
                             "arms": {"baseline": {}},
                             "systems": {"fake": {"type": type_, "options": options, **keys}}})


def system_conf(type_: str, options: dict, **keys) -> dict:
    """A system's config as resolution leaves it (defaults filled in, options checked)."""
    return system_matrix(type_, options, **keys).systems["fake"].conf


def run(prepared, tmp_path, conf, env=None, split=None, cache_dir=None, **files) -> dict:
    """The run's JSON, as the file holds it: the evaluation of `conf` under `env` on the prepared
    dataset; `files`: its other inputs as the cell names them (index, model), None for none."""
    inputs = {"tasks": prepared / "tasks.jsonl", "symbols": prepared / "symbols.jsonl",
              "manifest": prepared / "manifest.json", "tree": prepared / "tree", "dataset_file": prepared / "ds.json",
              **{k: v for k, v in files.items() if v is not None}}
    params = {"system_conf": conf, "env": env or {}, "top_k": 10, "split": split or {"split": "all", "seed": None},
              "home_dir": tmp_path / "home"}
    return evaluate_arm.run(CellJob("ds", "fake", "a", inputs, params, {"run": tmp_path / "run.json"}),
                            cache_dir=cache_dir).to_json()


def build_index(prepared, tmp_path, conf, env=None) -> Path:
    out, spec = tmp_path / "index", SystemSpec.from_conf(conf)
    build_system_index.run(system="fake", system_conf=conf, tree=prepared / "tree",
                           env=spec.cls.index_env(spec, env or {}), out=out,
                           home_dir=tmp_path / "home")
    return out


def ranks(run_: dict, method: str = "search") -> list:
    return [q["rank"] for q in run_["methods"][method]["queries"]]


def failures(run_: dict, method: str = "search") -> list:
    return [(q["failure"], q["error"]) for q in run_["methods"][method]["queries"]]


def alive(pid: int) -> bool:
    """Running, not a zombie (a zombie has exited; only its exit status is left)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


# --- what a system's keys hold ---------------------------------------------------------------

def test_project_files_the_argv_or_files_names_are_hashed_into_the_system_and_its_index(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the project: the workflow's working directory
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "run.py").write_text("print('a')\n")
    (tmp_path / "tools" / "build.py").write_text("print('b')\n")
    (tmp_path / "lib" / "sub").mkdir(parents=True)
    (tmp_path / "lib" / "sub" / "x.py").write_text("X = 1\n")
    m = system_matrix("command", {"index": [sys.executable, str(tmp_path / "tools" / "build.py"), "{index}"],
                                  "search": [sys.executable, "tools/run.py", "{query}", "{index}"],
                                  "files": ["lib"]})
    plan, sc = Plan(m), m.systems["fake"]
    sha = {p: hashlib.sha256(Path(p).read_bytes()).hexdigest() for p in ("tools/run.py", "tools/build.py",
                                                                          "lib/sub/x.py")}
    # the interpreter lies outside the project: pinned by the environment, not hashed
    assert plan.job_conf("fake")["files"] == dict(sorted(sha.items()))
    assert sc.cls.code_files(sc.options, index_only=True) == {"lib/sub/x.py": sha["lib/sub/x.py"],
                                                              "tools/build.py": sha["tools/build.py"]}
    before = plan.index_key("fake", "baseline", "c")
    (tmp_path / "tools" / "run.py").write_text("print('edited')\n")  # a query-time script: the index stays
    assert plan.index_key("fake", "baseline", "c") == before
    (tmp_path / "lib" / "sub" / "x.py").write_text("X = 2\n")
    assert plan.index_key("fake", "baseline", "c") != before
    assert "files" not in Plan(system_matrix("command", {"search": [sys.executable, "{query}"]})).job_conf("fake")
    with pytest.raises(CrmatrixError, match=r"^config: systems\.fake\.options\.files\[0\]: no file or directory "
                                            r"'nope' \(expected a path inside the project, relative to .*\)$"):
        system_conf("command", {"search": ["t", "{query}"], "files": ["nope"]})


# --- command -------------------------------------------------------------------------------

def test_command_system_with_an_index_job_scores_and_an_arm_changes_its_ranking(prepared, tmp_path):
    system = system_matrix("command", INDEXED).systems["fake"]
    conf = system.conf
    assert conf["methods"] == ["search"] and system.needs_index
    index = build_index(prepared, tmp_path, conf)
    assert json.loads((index / "crmatrix-index.json").read_text())["env"] == {}
    base = run(prepared, tmp_path, conf, index=index)
    assert ranks(base) == [1, 1, 1, 1]
    assert base["methods"]["search"]["metrics"]["mrr"] == 1.0
    assert base["methods"]["search"]["queries"][1]["top_candidate"] == {
        "path": "pkg/store.py", "symbol": "save_value", "kind": "method", "start_line": 2, "end_line": 3,
        "score": 2.0}
    weakest = run(prepared, tmp_path, conf, env={"FAKE_RANKING": "weakest-first"}, index=index)
    assert ranks(weakest) == [1, 2, 2, 1]
    assert weakest["methods"]["search"]["metrics"]["mrr"] == 0.75


def test_each_failure_kind_is_recorded_per_query_and_the_job_completes(prepared, tmp_path):
    conf = system_conf("command", INDEXED)
    index = build_index(prepared, tmp_path, conf)
    r = run(prepared, tmp_path, conf, env={"FAKE_MODE": "crash-on:parse|garbage-on:save|empty-on:load"}, index=index)
    assert failures(r) == [
        ("crash", "search: exit status 3: fake_search: crashing on 'parse config'"),
        ("bad-output", "not json: Expecting value: line 1 column 1 (char 0); the answer starts 'this is not JSON'"),
        ("empty", "no answer (blank output)"),
        (None, None),
    ]
    res = r["methods"]["search"]
    assert res["failures"] == {"crash": 1, "timeout": 0, "bad-output": 1, "empty": 1, "budget": 0}
    assert res["errors"] == 3 and ranks(r) == [None, None, None, 1]
    assert res["metrics"]["mrr"] == 0.25  # failures count as misses, never dropped
    assert json.loads((tmp_path / "run.json").read_text())["methods"]["search"]["failures"]["crash"] == 1


def test_a_hung_query_times_out_and_its_process_group_is_killed(prepared, tmp_path):
    conf = system_conf("command", INDEXED, timeout_s=1)
    index = build_index(prepared, tmp_path, conf)
    t0 = time.monotonic()
    r = run(prepared, tmp_path, conf, env={"FAKE_MODE": "hang-on:delete"}, index=index)
    assert time.monotonic() - t0 < 60  # the hang sleeps an hour
    assert failures(r)[3] == ("timeout", "search: no answer within 1 s")
    assert ranks(r) == [1, 1, 1, None]
    (pids,) = (tmp_path / "home").glob("hang-*.pids")
    assert [alive(int(p)) for p in pids.read_text().split()] == [False, False]  # the tool and its child


def test_a_system_failing_every_query_stops_the_job_with_the_first_error(prepared, tmp_path):
    conf = system_conf("command", INDEXED)
    index = build_index(prepared, tmp_path, conf)
    with pytest.raises(CrmatrixError) as e:
        run(prepared, tmp_path, conf, env={"FAKE_MODE": "crash-on: "}, index=index)
    assert str(e.value) == ("command system 'fake' on dataset 'ds', arm 'a': method search: every query failed; "
                            "the first: search: exit status 3: fake_search: crashing on 'parse config'")
    assert not (tmp_path / "run.json").exists()


def test_a_method_whose_first_queries_fail_alike_stops_there_and_asks_no_more(prepared, tmp_path):
    conf = system_conf("command", {**INDEXED, "hits": "data.hits[]"})  # the tool answers data.symbols
    index = build_index(prepared, tmp_path, conf)
    with pytest.raises(CrmatrixError) as e:
        run(prepared, tmp_path, conf, index=index)
    assert str(e.value) == ("command system 'fake' on dataset 'ds', arm 'a': method search: the first 3 queries "
                            "failed alike, the other 1 were not run; the first: hit path 'data.hits[]': no key 'hits' "
                            "in an object with keys 'symbols'")
    assert (tmp_path / "home" / "asked.txt").read_text().splitlines() == ["parse config", "save value", "load value"]
    assert not (tmp_path / "run.json").exists()  # no run: a query not asked is never scored as a miss
    # timeouts alike are no misconfiguration (a cold start, a busy machine): every query is asked
    conf = system_conf("command", INDEXED, timeout_s=1)
    r = run(prepared, tmp_path, conf, env={"FAKE_MODE": "hang-on:parse|hang-on:save|hang-on:load"}, index=index)
    assert failures(r)[:3] == [("timeout", "search: no answer within 1 s")] * 3 and ranks(r)[3] == 1


def test_a_method_whose_first_answers_name_nothing_of_the_corpus_stops_there(prepared, tmp_path):
    conf = system_conf("command", INDEXED)
    index = build_index(prepared, tmp_path, conf)
    with pytest.raises(CrmatrixError) as e:  # the tool answers its files by name alone: config.py
        run(prepared, tmp_path, conf, env={"FAKE_MODE": "basename-on: "}, index=index)
    assert str(e.value) == ("command system 'fake' on dataset 'ds', arm 'a': method search: the first 3 answers name "
                            "nothing of the corpus (no hit is one of its symbols or files), the other 1 were not "
                            "asked; the first answer's top hit: path 'config.py', symbol "
                            "'parse_config', line 1 (check the system's `hits` and `fields`, or what it answers)")
    assert (tmp_path / "home" / "asked.txt").read_text().splitlines() == ["parse config", "save value", "load value"]
    assert not (tmp_path / "run.json").exists()
    # one answer among the first that names a symbol: every query is asked, and the rest counted
    r = run(prepared, tmp_path, conf, env={"FAKE_MODE": "basename-on:value|basename-on:delete"}, index=index)
    assert ranks(r) == [1, None, None, None] and failures(r) == [(None, None)] * 4
    assert (r["methods"]["search"]["no_hit"], r["methods"]["search"]["no_hit_warning"]) == (3, True)


def test_a_spent_budget_leaves_the_remaining_queries_unasked(prepared, tmp_path):
    conf = system_conf("command", INDEXED, timeout_s=2, budget_s=1.5)
    index = build_index(prepared, tmp_path, conf)
    r = run(prepared, tmp_path, conf, env={"FAKE_MODE": "hang-on:save"}, index=index)
    assert [f for f, _ in failures(r)] == [None, "timeout", "budget", "budget"]
    assert failures(r)[2][1] == "not asked: the job's budget of 1.5 s is spent"
    assert r["methods"]["search"]["failures"] == {"crash": 0, "timeout": 1, "bad-output": 0, "empty": 0, "budget": 2}


def test_the_system_sees_a_clean_environment_and_its_own_home(prepared, tmp_path, monkeypatch):
    monkeypatch.setenv("CRMATRIX_TEST_SECRET", "leaked")
    monkeypatch.setenv("CRMATRIX_TEST_PASSED", "passed")
    conf = system_conf("command", {**INDEXED, "pass_env": ["CRMATRIX_TEST_PASSED"],
                                   "env": {"FAKE_CORPUS": "{corpus}", "FAKE_RANKING": "weakest-first"}})
    index = build_index(prepared, tmp_path, conf, env={"ARM_KNOB": "1"})
    assert json.loads((index / "crmatrix-index.json").read_text())["env"] == {"ARM_KNOB": "1"}
    r = run(prepared, tmp_path, conf, env={"ARM_KNOB": "1", "FAKE_RANKING": "best-first"}, index=index)
    assert ranks(r) == [1, 1, 1, 1]  # the arm's variable beats the system's env
    seen = json.loads((tmp_path / "home" / "last-env.json").read_text())
    home = str((tmp_path / "home").resolve())
    assert sorted(seen) == ["ARM_KNOB", "CRMATRIX_TEST_PASSED", "FAKE_CORPUS", "FAKE_RANKING",
                            "GIT_CEILING_DIRECTORIES", "HF_DATASETS_OFFLINE", "HF_HUB_OFFLINE", "HOME", "LANG", "PATH",
                            "TMPDIR", "TRANSFORMERS_OFFLINE", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME"]
    assert seen["HOME"] == home and seen["TMPDIR"] == f"{home}/tmp" and seen["HF_HUB_OFFLINE"] == "1"
    mirror = isolation.mirror_path(prepared / "tree", "fake")  # its corpus: a mirror of the tree
    assert seen["FAKE_CORPUS"] == str(mirror)
    assert seen["GIT_CEILING_DIRECTORIES"] == f"{mirror.parent}:{Path(home).parent}"
    assert json.loads((index / "fake-index.json").read_text())["seen_home"] == home


def test_batch_mode_asks_many_queries_per_call_and_a_failed_call_fails_its_queries(prepared, tmp_path):
    batch = {"search": [*FAKE_CLI, "batch", "{index}", "{queries}", "{k}"], "results": "results[]", "size": 3}
    conf = system_conf("command", {**INDEXED, "batch": batch})
    index = build_index(prepared, tmp_path, conf)
    r = run(prepared, tmp_path, conf, env={"FAKE_RANKING": "weakest-first"}, index=index)
    assert ranks(r) == [1, 2, 2, 1]
    r = run(prepared, tmp_path, conf, env={"FAKE_MODE": "crash-on:save"}, index=index)
    assert failures(r)[:3] == [("crash", "search (batch): exit status 3: fake_search: crashing on 'save value'")] * 3
    assert ranks(r) == [None, None, None, 1]
    assert not list((tmp_path / "home" / "tmp").iterdir())  # the query files are removed


def test_a_blob_system_is_scored_at_rank_one_only(prepared, tmp_path):
    conf = system_conf("command", {**INDEXED, "search": [*FAKE_CLI, "context", "{index}", "{query}", "{k}"],
                                   "response": "blob", "hits": "cited[]", "blob": "context"})
    index = build_index(prepared, tmp_path, conf)
    r = run(prepared, tmp_path, conf, env={"FAKE_RANKING": "weakest-first"}, index=index)
    res = r["methods"]["search"]
    assert res["response"] == "blob" and ranks(r) == [1, 1, 1, 1]  # the gold is in each composed answer
    assert res["metrics"] == {"n": 4, "mrr": 1.0, "mrr@10": 1.0, "acc@1": 1.0, "precision@1": 1.0, "acc@3": None,
                              "acc@5": None, "recall@5": None, "recall@10": None, "recall@100": None, "ndcg@10": None,
                              "map": None, "map@10": None, "coverage": None}
    assert res["by_query_type"]["identifier"]["recall@10"] is None
    q = res["queries"][1]
    assert q["relevant_ranks"] == [1] and q["hits"] == 2
    from crmatrix.evaluation.tokens import count_tokens
    assert q["response_tokens"] == count_tokens("# pkg/store.py:5 load_value\n\n# pkg/store.py:2 save_value")


# --- mcp -----------------------------------------------------------------------------------

MCP = {"server": FAKE_MCP, "tool": "search", "args": {"query": "{query}", "k": "{k}"}, **HITS}


def test_mcp_server_crash_and_hang_are_recorded_and_no_server_outlives_the_job(prepared, tmp_path, monkeypatch):
    monkeypatch.setenv("CRMATRIX_TEST_SECRET", "leaked")
    conf = system_conf("mcp", MCP, timeout_s=2)
    t0 = time.monotonic()
    r = run(prepared, tmp_path, conf, env={"FAKE_MODE": "crash-on:parse|hang-on:save"})
    assert time.monotonic() - t0 < 60
    assert failures(r) == [
        ("crash", "search: server exited with status 3 during the call; "
                  "server stderr: fake_mcp_server: crashing on 'parse config'"),
        ("timeout", "search: no answer within 2 s"),
        (None, None), (None, None)]
    assert ranks(r) == [None, None, 1, 1]
    prov = r["provenance"]["system_run"]
    assert prov["server_starts"] == 3  # the first, then a fresh one after the crash and after the hang
    assert prov["server"]["name"] == "fake-search"
    pids = [int(p.read_text()) for p in (tmp_path / "home").glob("mcp-*.pid")]
    assert len(pids) == 3 and not any(alive(p) for p in pids)
    seen = json.loads((tmp_path / "home" / "last-env.json").read_text())
    assert "CRMATRIX_TEST_SECRET" not in seen and seen["HOME"] == str((tmp_path / "home").resolve())


def test_mcp_one_server_answers_every_query_and_method(prepared, tmp_path):
    conf = system_conf("mcp", {**MCP, "methods": {"best": {}, "top1": {"args": {"query": "{query}", "k": 1}}}})
    assert conf["methods"] == ["best", "top1"]
    r = run(prepared, tmp_path, conf, env={"FAKE_RANKING": "weakest-first"})
    assert ranks(r, "best") == [1, 2, 2, 1] and ranks(r, "top1") == [1, None, None, 1]
    assert r["provenance"]["system_run"]["server_starts"] == 1
    assert len(list((tmp_path / "home").glob("mcp-*.pid"))) == 1


def test_mcp_server_that_cannot_start_is_a_job_error(prepared, tmp_path):
    conf = system_conf("mcp", {**MCP, "server": [sys.executable, "-c", "import sys; sys.exit('no such index')"]})
    with pytest.raises(CrmatrixError, match=r"^mcp system 'fake' on dataset 'ds', arm 'a': MCP server \[.*\] did not "
                                            r"start: server exited with status 1 before answering initialize; "
                                            r"server stderr: no such index$"):
        run(prepared, tmp_path, conf)


def test_an_mcp_tool_the_server_does_not_list_stops_the_job_before_any_query_naming_its_tools(prepared, tmp_path):
    conf = system_conf("mcp", {**MCP, "tool": "serch"})
    with pytest.raises(CrmatrixError) as e:
        run(prepared, tmp_path, conf)
    assert str(e.value) == ("mcp system 'fake' on dataset 'ds', arm 'a': the server lists no tool 'serch' (did you "
                            "mean 'search'?); its tools: search")
    assert not (tmp_path / "home" / "last-env.json").exists()  # written by each call of its tool: none was made
    pids = [int(p.read_text()) for p in (tmp_path / "home").glob("mcp-*.pid")]
    assert len(pids) == 1 and not alive(pids[0])
    # a method's own tool is checked too; a name close to none gets no suggestion
    conf = system_conf("mcp", {**MCP, "methods": {"best": {}, "symbols": {"tool": "find_symbol"}}})
    with pytest.raises(CrmatrixError) as e:
        run(prepared, tmp_path, conf)
    assert str(e.value) == ("mcp system 'fake' on dataset 'ds', arm 'a': the server lists no tool 'find_symbol'; "
                            "its tools: search")
    # an MCP server's answers naming nothing stop the job as a command's do
    with pytest.raises(CrmatrixError, match=r"^mcp system 'fake' on dataset 'ds', arm 'a': method search: the first "
                                            r"3 answers name nothing of the corpus .*; the first answer's top hit: "
                                            r"path 'config.py', symbol 'parse_config', line 1 "):
        run(prepared, tmp_path, system_conf("mcp", MCP), env={"FAKE_MODE": "basename-on: "})


# --- in-process plugins ----------------------------------------------------------------------

@pytest.fixture
def plugin():
    """A plugin type registered for one test: it answers by name, hangs, raises or returns junk on cue."""
    class Plugin(systems.System):
        METHODS = ("names",)

        def __init__(self, ctx):
            super().__init__(ctx)
            self.symbols = ctx.symbols

        def search(self, query, method, k):
            if "delete" in query:
                time.sleep(3600)
            if "parse" in query:
                raise TimeoutError("backend did not answer")
            if "load" in query:
                return {"not": "hits"}
            words = set(query.split())
            return [Hit(s.path, s.name, s.kind, s.start_line, s.end_line, 1.0) for s in self.symbols
                    if words & set(s.name.split("_"))][:k]

    systems.register("test-plugin")(Plugin)
    yield
    del systems.TYPES.own["test-plugin"]


def test_an_in_process_plugin_that_hangs_costs_a_timeout_not_the_job(prepared, tmp_path, plugin):
    conf = system_conf("test-plugin", {}, timeout_s=1)
    t0 = time.monotonic()
    r = run(prepared, tmp_path, conf)
    assert time.monotonic() - t0 < 60
    assert failures(r, "names") == [
        ("timeout", "TimeoutError: backend did not answer"),
        (None, None),
        ("bad-output", "search returned dict, expected a list of Hit or an Answer"),
        ("timeout", "search: no answer within 1 s")]
    assert ranks(r, "names") == [None, 1, None, None]


@pytest.mark.parametrize("share, answered", [(0.6, True), (1.2, False)])
def test_a_batch_has_the_time_of_its_queries_together(prepared, tmp_path, share, answered):
    """A plugin answering 3 queries per call in `share` x 3 x timeout_s: within the batch's
    limit (3 x timeout_s) every query is answered; beyond it, each of them is a timeout. (The
    last batch, of 1 query, answers at once: a job whose every query fails stops.)"""
    class Batched(systems.System):
        METHODS = ("names",)
        batch_size = 3

        def __init__(self, ctx):
            super().__init__(ctx)
            self.symbols, self.timeout_s = ctx.symbols, ctx.timeout_s

        def search(self, query, method, k):
            raise AssertionError("a batch system is asked in batches")

        def search_batch(self, queries, method, k):
            time.sleep(share * len(queries) * self.timeout_s if len(queries) == self.batch_size else 0)
            return [[Hit(s.path, s.name, s.kind, s.start_line, s.end_line, 1.0) for s in self.symbols
                     if set(q.split()) & set(s.name.split("_"))][:k] for q in queries]

    systems.register("test-batched")(Batched)
    try:
        r = run(prepared, tmp_path, system_conf("test-batched", {}, timeout_s=1))
    finally:
        del systems.TYPES.own["test-batched"]
    if answered:
        assert ranks(r, "names") == [1, 1, 2, 1] and failures(r, "names") == [(None, None)] * 4
    else:
        assert failures(r, "names") == [("timeout", "batch search: no answer within 3 s")] * 3 + [(None, None)]


# --- in the matrix ---------------------------------------------------------------------------

def test_the_matrix_cell_shows_failures_and_blob_scoring_and_the_token_table(prepared, tmp_path):
    ranked = system_conf("command", INDEXED)
    index = build_index(prepared, tmp_path, ranked)
    blob = system_conf("command", {**INDEXED, "search": [*FAKE_CLI, "context", "{index}", "{query}", "{k}"],
                                   "response": "blob", "hits": "cited[]", "blob": "context"})
    runs = []
    for name, conf, env in [("ranked", ranked, {"FAKE_MODE": "crash-on:parse|hang-on:delete"}), ("blob", blob, {})]:
        r = run(prepared, tmp_path, {**conf, "timeout_s": 1}, env=env, index=index)
        del r["checksum"]  # a run of the same system under another name, sealed as such
        runs.append(fixture_runs.write(tmp_path / f"{name}.json", {**r, "system": name}))
    m = collect_matrix.run(fixture_runs.cell_files(runs, "a", "search"), "a", "search", ["a"], {},
                           tmp_path / "m.json", tmp_path / "m.md")
    cells = {r["system"]: r["cells"]["a"] for r in m.to_json()["rows"]}
    assert cells["ranked"]["failures"] == {"crash": 1, "timeout": 1} and "response" not in cells["ranked"]
    assert cells["blob"]["response"] == "blob" and cells["blob"]["failures"] == {}
    md = (tmp_path / "m.md").read_text()
    assert "| ds | ranked | search | python | 4 | — | 0.500 [0.00, 1.00]<br>⚠ 2 failed (1 crash, 1 timeout) |" in md
    assert "| ds | blob | search | python | 4 | — | 1.000 [1.00, 1.00]<br>blob: rank-1 only |" in md
    assert "| identifier | 1 | " in md and "## Token efficiency against grep-and-read (a, headline method)" in md
