"""The graph in the DAG: extract_graph, a graph-expansion arm, a structural split with its
gate, and a call-graph edge dataset, end to end on a tiny corpus."""

import json

import pytest
import yaml
from conftest import by_hand, snakemake

OFF = {"CODELENS_EMBED_HINT_AUTO": "0"}
CORPUS = {
    "pkg/store.py": (
        "def open_db(path):\n"
        '    """Open the key value database file at a path."""\n'
        "    return connect(path, timeout=5)\n\n\n"
        "def connect(path, timeout):\n"
        '    """Low level socket setup with retries."""\n'
        "    return Handle(path)\n\n\n"
        "class Handle:\n"
        "    def get(self, key):\n"
        '        """Look up the value stored under a key."""\n'
        "        return self.read_page(key)\n\n"
        "    def read_page(self, key):\n"
        '        """Decode one btree page from disk."""\n'
        "        return key\n"
    ),
    "pkg/text.py": 'def slugify(title):\n    """Turn a title into a url slug."""\n    return title.lower()\n',
}
DATASET = [
    {"query": "open the key value database file", "expected_symbol": "open_db", "expected_file_suffix": "store.py"},
    {"query": "look up the value stored under a key", "expected_symbol": "get", "expected_file_suffix": "store.py"},
    {"query": "turn a title into a url slug", "expected_symbol": "slugify", "expected_file_suffix": "text.py"},
]


@pytest.fixture(scope="module")
def graph_work(tmp_path_factory):
    work = tmp_path_factory.mktemp("graphwork")
    for rel, text in CORPUS.items():
        (work / "rs" / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / "rs" / rel).write_text(text)
    (work / "ds.json").write_text(json.dumps(DATASET))
    (work / "calls.json").write_text(json.dumps([{"caller": "open_db", "callee": "connect", "file": "store.py"},
                                                 {"caller": "get", "callee": "read_page", "file": "store.py"}]))
    cfg = {
        "corpora": {"rs": {"path": "rs"}},
        "datasets": {"rs": {"file": "ds.json", "corpus": "rs"},
                     "rs-structural": {"file": "ds.json", "corpus": "rs", "split": "structural"},
                     "rs-calls": {"file": "calls.json", "corpus": "rs", "format": "callgraph"}},
        "systems": {"builtin": {"type": "builtin", "methods": ["hybrid", "semantic"]}},
        "arms": {"baseline": OFF, "expand": {**OFF, "CRMATRIX_GRAPH_EXPAND": "1"},
                 "rrf": {**OFF, "CRMATRIX_FUSION": "rrf"}},
    }
    (work / "config.yaml").write_text(yaml.safe_dump(cfg))
    snakemake(work, "--configfile", str(work / "config.yaml"), "--cores", "2", "all")
    return work, cfg


@pytest.mark.slow
@by_hand
def test_graph_split_gate_and_call_table_end_to_end(graph_work):
    work, _ = graph_work
    g = json.loads((work / "results/graph/rs.json").read_text())
    assert g["calls"] == [["pkg/store.py:12:get", "pkg/store.py:16:read_page"],
                          ["pkg/store.py:1:open_db", "pkg/store.py:6:connect"],
                          ["pkg/store.py:6:connect", "pkg/store.py:11:Handle"]]
    assert set(g) == {"symbols", "symbols_hash", "calls", "inherits", "overrides", "imports", "counts"}
    tasks = [json.loads(line) for line in (work / "results/datasets/rs-structural.jsonl").read_text().splitlines()]
    assert tasks and all(t["gold"]["derived_from"]["type"] == "symbol" for t in tasks)
    m = json.loads((work / "results/matrix/phase-matrix.json").read_text())
    assert [r["dataset"] for r in m["rows"]] == ["rs", "rs-structural"]  # edge datasets have their own table
    assert [(x["dataset"], sorted(x["arms"])) for x in m["gates"]] == [("rs-structural", ["expand", "rrf"])]
    assert "## Do-no-harm gate: recall@10 on structural splits must not drop" in \
        (work / "results/matrix/phase-matrix.md").read_text()
    assert "| rs-calls | builtin | callees | 2 | 1.000 | 1.000 | 1.000 | 0 |" in \
        (work / "results/matrix/callgraph.md").read_text()


def test_only_arms_that_expand_rerun_when_the_graph_changes(graph_work):
    work, _ = graph_work
    out = snakemake(work, "--configfile", str(work / "config.yaml"), "-n", "--cores", "1", "all",
                    "--forcerun", "extract_graph").stdout
    planned = sorted(line.split("output: ")[1] for line in out.splitlines() if "output: results/runs/rs/" in line)
    # the plain dataset's baseline and rrf arms do not read the graph (the split's tasks do, so all of it re-runs)
    assert planned == ["results/runs/rs/builtin/expand.json, results/trec/rs/builtin/expand, "
                       "results/tracking/rs/builtin/expand.jsonl"]
