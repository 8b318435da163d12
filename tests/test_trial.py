"""`crmatrix try`: one query to one system of a config, its tools, raw answer, hits and what
each resolved to, on the fake CLI and the fake MCP server (tests/fakes/)."""

import subprocess

import pytest
import yaml
from conftest import BIN
from test_systems import CORPUS, FAKE_CLI, FAKE_MCP, HITS

MCP_SCHEMA = ('{"properties": {"k": {"default": 10, "title": "K", "type": "integer"}, "query": {"title": "Query", '
              '"type": "string"}}, "required": ["query"], "title": "searchArguments", "type": "object"}')


@pytest.fixture
def project(tmp_path):
    """A corpus directory and a config naming it `demo`, with the fake CLI (indexed) and the
    fake MCP server as systems, and arms under which the CLI answers paths outside the corpus,
    or what is not JSON."""
    src = tmp_path / "proj"
    for rel, text in CORPUS.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text)
    cfg = tmp_path / "m.yaml"
    cfg.write_text(yaml.safe_dump({
        "corpora": {"demo": {"path": str(src)}},
        "arms": {"baseline": {}, "outside": {"FAKE_MODE": "outside-on:config"},
                 "garbage": {"FAKE_MODE": "garbage-on:config"}},
        "systems": {
            "fake-search": {"type": "command", "options": {
                "index": [*FAKE_CLI, "index", "{corpus}", "{index}"],
                "search": [*FAKE_CLI, "search", "{index}", "{query}", "{k}"], **HITS}},
            "fake-mcp": {"type": "mcp", "options": {"server": FAKE_MCP, "tool": "search",
                                                    "args": {"query": "{query}", "k": "{k}"}, **HITS}},
            "misnamed": {"type": "mcp", "options": {"server": FAKE_MCP, "tool": "serch", **HITS}},
            # its paths alone: a file of the corpus, no symbol; declared to answer files, or not
            **{name: {"type": "command", "options": {
                "index": [*FAKE_CLI, "index", "{corpus}", "{index}"],
                "search": [*FAKE_CLI, "search", "{index}", "{query}", "{k}"], "hits": HITS["hits"],
                "fields": {"path": "file"}, **extra}} for name, extra in (("by-file", {"granularity": "file"}),
                                                                          ("by-path", {}))}}},
        sort_keys=False))
    return tmp_path, cfg


def crmatrix_try(cwd, *args):
    return subprocess.run([str(BIN / "crmatrix"), "try", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=300)


def test_try_an_mcp_server_lists_its_tools_with_their_schemas_then_its_answer_resolved(project):
    tmp_path, cfg = project
    proc = crmatrix_try(tmp_path, "fake-mcp", "--corpus", "demo", "--query", "load value", "--config", str(cfg),
                        "-k", "2")
    assert proc.returncode == 0, proc.stderr
    raw = ('{"data": {"symbols": [{"name": "load_value", "file": "pkg/store.py", "line": 5, "score": 2.0}, '
           '{"name": "save_value", "file": "pkg/store.py", "line": 2, "score": 1.0}]}}')
    assert proc.stdout.splitlines() == [
        "tools (1):",
        "  search: (no description)",
        f"    input schema: {MCP_SCHEMA}",
        "fake-mcp · search · k 2 · query 'load value'",
        f"raw answer ({len(raw)} characters):",
        f"  {raw}",
        "hits (2):",
        "  1. pkg/store.py  load_value  line 5  score 2",
        "     -> symbol load_value (method, pkg/store.py:5-6)",
        "  2. pkg/store.py  save_value  line 2  score 1",
        "     -> symbol save_value (method, pkg/store.py:2-3)",
        "outcome: 2 of 2 hits name a symbol or file of the corpus",
    ]


def test_try_a_command_on_a_directory_shows_a_hit_outside_the_corpus_unresolved(project):
    tmp_path, cfg = project
    proc = crmatrix_try(tmp_path, "fake-search", "--corpus", str(tmp_path / "proj"), "--query", "parse config",
                        "--config", str(cfg), "--arm", "outside")
    assert proc.returncode == 0, proc.stderr
    raw = '{"data": {"symbols": [{"name": "parse_config", "file": "vendored/pkg_config.py", "line": 1, "score": 2.0}]}}'
    assert proc.stdout.splitlines() == [
        "fake-search · search · k 10 · query 'parse config'",
        f"raw answer ({len(raw) + 1} characters):",  # print()'s newline is part of what it answered
        f"  {raw}",
        "hits (1):",
        "  1. vendored/pkg_config.py  parse_config  line 1  score 2",
        "     -> unresolved: path not in the corpus",
        "outcome: unresolved (no hit names a symbol or file of the corpus)",
    ]
    # the baseline arm: the same hit, in the corpus
    proc = crmatrix_try(tmp_path, "fake-search", "--corpus", "demo", "--query", "parse config", "--config", str(cfg))
    assert proc.stdout.splitlines()[4:] == [
        "  1. pkg/config.py  parse_config  line 1  score 2",
        "     -> symbol parse_config (function, pkg/config.py:1-2)",
        "outcome: 1 of 1 hits name a symbol or file of the corpus",
    ]


@pytest.mark.parametrize(("args", "line"), [
    (["fake-serch", "--corpus", "demo"],
     "system 'fake-serch' is not a system of the config (did you mean 'fake-search'? "
     "known: fake-search, fake-mcp, misnamed, by-file, by-path)"),
    (["fake-mcp", "--corpus", "dem"],
     "--corpus 'dem' is neither a corpus of the config (did you mean 'demo'? known: demo) nor a directory"),
    (["fake-mcp", "--corpus", "demo", "--method", "best"],
     "m.yaml: systems.fake-mcp.methods: best not supported by mcp (expected some of: search)"),
])
def test_try_of_an_unknown_system_corpus_or_method_is_one_line(project, args, line):
    tmp_path, cfg = project
    proc = crmatrix_try(tmp_path, *args, "--query", "x", "--config", cfg.name)
    assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", f"crmatrix: {line}\n")


def test_try_an_mcp_server_without_the_configured_tool_lists_the_tools_it_has(project):
    tmp_path, cfg = project
    proc = crmatrix_try(tmp_path, "misnamed", "--corpus", "demo", "--query", "x", "--config", str(cfg))
    assert proc.returncode == 2
    assert proc.stdout.splitlines() == ["tools (1):", "  search: (no description)", f"    input schema: {MCP_SCHEMA}"]
    assert proc.stderr == "crmatrix: the server lists no tool 'serch' (did you mean 'search'?); its tools: search\n"


def test_try_of_a_query_that_fails_says_how_and_exits_one(project):
    tmp_path, cfg = project
    proc = crmatrix_try(tmp_path, "fake-search", "--corpus", "demo", "--query", "parse config", "--config", str(cfg),
                        "--arm", "garbage")
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.splitlines() == [
        "fake-search · search · k 10 · query 'parse config'",
        "failed (bad-output): not json: Expecting value: line 1 column 1 (char 0); "
        "the answer starts 'this is not JSON'",
    ]


def test_try_a_tool_answering_files_resolves_them_to_files_when_it_declares_so(project):
    tmp_path, cfg = project
    tails = {}
    for system in ("by-file", "by-path"):
        proc = crmatrix_try(tmp_path, system, "--corpus", "demo", "--query", "parse config", "--config", str(cfg))
        assert proc.returncode == 0, proc.stderr
        tails[system] = proc.stdout.splitlines()[4:]
    assert tails == {
        "by-file": ["  1. pkg/config.py  (no symbol)  no lines  score 2",
                    "     -> file pkg/config.py (the method answers files)",
                    "outcome: 1 of 1 hits name a symbol or file of the corpus"],
        "by-path": ["  1. pkg/config.py  (no symbol)  no lines  score 2",
                    "     -> unresolved: no symbol named, nor a line (the file pkg/config.py is in the corpus)",
                    "outcome: unresolved (no hit names a symbol or file of the corpus)"]}
