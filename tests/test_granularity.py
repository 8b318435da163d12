"""A system is scored at the granularity it answers: a file-level tool (the fake CLI answering
paths) gets file-level metrics on a dataset of symbol gold, and the leaderboard ranks it beside
the builtin at file level, with the builtin's symbol-level board kept.

The corpus and queries are made so that the fake ranks each gold symbol last (FAKE_RANKING
weakest-first: the fewer query words a name holds, the higher it ranks), behind symbols of
other files, so that the file-level ranks can be worked by hand."""

import json
from pathlib import Path

import pytest
from test_systems import FAKE_CLI, build_index, system_conf

from crmatrix import CrmatrixError
from crmatrix.analysis import cells as cellstats
from crmatrix.analysis import versus
from crmatrix.analysis.matrix import assemble
from crmatrix.analysis.matrix.markdown import to_markdown
from crmatrix.datasets.tasks import Task
from crmatrix.evaluation.cell import CellJob
from crmatrix.evaluation.evaluate import evaluate as evaluate_run
from crmatrix.hits import Hit
from crmatrix.plots import leaderboard as plots_leaderboard
from crmatrix.stages import evaluate_arm, extract_symbols, fetch_corpus, prepare_dataset
from crmatrix.symbols import Symbol
from crmatrix.systems.base import System, SystemContext

CORPUS = {
    "pkg/config.py": "def read_value(text):\n    return text\n",
    "pkg/store.py": "def save_value(key):\n    return key\n\n\ndef load_value(key):\n    return key\n",
    "pkg/util.py": "def value_of(x):\n    return x\n",
}
DATASET = [
    {"query": "read value", "expected_symbol": "read_value", "expected_file_suffix": "pkg/config.py",
     "query_type": "short_phrase"},
    {"query": "load value", "expected_symbol": "load_value", "expected_file_suffix": "pkg/store.py",
     "query_type": "short_phrase"},
    {"query": "value of", "expected_symbol": "value_of", "expected_file_suffix": "pkg/util.py",
     "query_type": "identifier"},
]
# The fake's hits, weakest first (score ties by file, then line), and the gold's ranks:
#   read value: store save_value, store load_value, util value_of, config read_value -> symbol 4, file 3
#   load value: config read_value, store save_value, util value_of, store load_value -> symbol 4, file 2
#   value of:   config read_value, store save_value, store load_value, util value_of -> symbol 4, file 3
WEAKEST = {"FAKE_RANKING": "weakest-first"}
FILE_MRR = (1 / 3 + 1 / 2 + 1 / 3) / 3
SEARCH = {"index": [*FAKE_CLI, "index", "{corpus}", "{index}"],
          "search": [*FAKE_CLI, "search", "{index}", "{query}", "{k}"], "hits": "data.symbols[]"}
PATHS = {**SEARCH, "fields": {"path": "file"}, "granularity": "file"}  # a tool answering files: no name, no line
LINES = {**SEARCH, "fields": {"path": "file", "start_line": "line"}}  # a line resolves to the symbol there


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    root = tmp_path_factory.mktemp("corpus")
    for rel, text in CORPUS.items():
        (root / "src" / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / "src" / rel).write_text(text)
    (root / "ds.json").write_text(json.dumps(DATASET))
    fetch_corpus.run("fake", {"path": str(root / "src"), "include": ["**"], "exclude": []}, root / "tree",
                     root / "manifest.json", [], {})
    extract_symbols.run(root / "tree", root / "manifest.json", root / "symbols.jsonl")
    prepare_dataset.run(root / "ds.json", "codelens", "fake", root / "manifest.json", root / "symbols.jsonl",
                        root / "tasks.jsonl")
    return root


def evaluate(prepared: Path, tmp_path: Path, system: str, conf: dict, env: dict | None = None, **files):
    """The run of `system` (its config `conf`) on the dataset, under the arm `baseline`."""
    inputs = {"tasks": prepared / "tasks.jsonl", "symbols": prepared / "symbols.jsonl",
              "manifest": prepared / "manifest.json", "tree": prepared / "tree", "dataset_file": prepared / "ds.json",
              **files}
    params = {"system_conf": conf, "env": env or {}, "top_k": 10, "split": {"split": "all", "seed": None},
              "home_dir": tmp_path / system / "home"}
    out = {"run": tmp_path / system / "run.json"}
    return evaluate_arm.run(CellJob("ds", system, "baseline", inputs, params, out))


def test_a_tool_answering_paths_is_scored_at_file_level(prepared, tmp_path):
    conf = system_conf("command", PATHS)
    index = build_index(prepared, tmp_path, conf)
    run = evaluate(prepared, tmp_path, "paths", conf, WEAKEST, index=index)
    result = run.methods["search"]
    assert result.granularity == "file"
    assert result.metrics["mrr"] == 0.0  # it never names the gold symbol
    assert [q.rank for q in result.queries] == [None] * 3
    assert [q.outcome for q in result.queries] == [None] * 3 and result.unresolved == 0  # files of the corpus: misses
    assert [(q.file_level.rank, q.file_level.n_relevant) for q in result.queries] == [(3, 1), (2, 1), (3, 1)]
    files = result.file_metrics
    assert files["mrr"] == pytest.approx(FILE_MRR)
    assert (files["acc@1"], files["acc@3"], files["recall@5"], files["acc_all@1"], files["acc_all@3"]) == (
        0.0, 1.0, 1.0, 0.0, 1.0)
    # undeclared, answers naming files but no symbol of a symbol gold are unresolved: the job stops, saying how
    undeclared = system_conf("command", {k: v for k, v in PATHS.items() if k != "granularity"})
    with pytest.raises(CrmatrixError, match=r"the first 3 answers name nothing of the corpus .*path 'pkg/store.py' "
                                            r"\(check the system's `hits` and `fields`, or what it answers; a tool "
                                            r"answering files declares `granularity: file`\)$"):
        evaluate(prepared, tmp_path, "undeclared", undeclared, WEAKEST, index=index)


def test_a_declared_file_level_tool_is_so_recorded_and_its_hits_collapse_to_files(prepared, tmp_path):
    """Hits at lines resolve to symbols; declared `granularity: file`, the run says so, and two
    hits of one file rank that file once, at its first."""
    conf = system_conf("command", {**LINES, "granularity": "file"})
    run = evaluate(prepared, tmp_path, "lines", conf, WEAKEST, index=build_index(prepared, tmp_path, conf))
    result = run.methods["search"]
    assert result.granularity == "file"
    assert [q.rank for q in result.queries] == [4, 4, 4]  # the symbol level, as before
    assert result.metrics["mrr"] == 0.25
    assert [q.file_level.relevant_ranks for q in result.queries] == [(3,), (2,), (3,)]
    assert result.file_metrics["mrr"] == pytest.approx(FILE_MRR)
    undeclared = evaluate(prepared, tmp_path, "undeclared", system_conf("command", LINES), WEAKEST,
                          index=build_index(prepared, tmp_path, conf))
    assert undeclared.methods["search"].granularity == "symbol"  # its hits name symbols


class Fixed(System):
    """Answers every query with the same hits: two of a.py, then b.py, a.py again, then the gold's file."""
    HITS = [Hit("a.py", "f", "function", 1, 2, 0.9), Hit("b.py", "g", "function", 1, 2, 0.8),
            Hit("a.py", "h", "function", 4, 5, 0.7), Hit("c.py", "gold", "function", 1, 2, 0.6)]

    def search(self, query, method, k):
        return self.HITS[:k]


def test_a_symbol_gold_run_has_exact_file_level_metrics():
    """Symbol gold: the gold's file is its path; hits ranked as files a, b, c (a's second hit
    collapses into its first), so the gold ranks 4th as a symbol and 3rd as a file."""
    symbols = [Symbol(name=h.symbol, kind=h.kind, parent="", path=h.path, language="python", start_line=h.start_line,
                      end_line=h.end_line, signature="", doc="", body="") for h in Fixed.HITS]
    task = Task("t1", "the gold", "short_phrase", {"symbol": "gold", "file_suffix": "c.py"}, "c")
    ctx = SystemContext(corpus_dir=Path("."), manifest={}, symbols=symbols)
    results, ranked, _ = evaluate_run(Fixed(ctx), [task], symbols, ["fixed"], 10)
    result = results["fixed"]
    assert result["granularity"] == "symbol"  # undeclared, its hits name symbols
    row = result["queries"][0]
    assert (row["rank"], row["file_level"]) == (4, {"rank": 3, "relevant_ranks": [3], "n_relevant": 1})
    assert result["metrics"]["mrr"] == 0.25
    files = result["file_metrics"]
    assert (files["mrr"], files["acc@1"], files["acc@3"], files["acc_all@1"], files["acc_all@3"]) == (
        1 / 3, 0.0, 1.0, 0.0, 1.0)
    assert files["ndcg@10"] == pytest.approx(0.5)  # 1 / log2(3 + 1)
    assert ranked["fixed"]["t1"] == ["a.py:1:f", "b.py:1:g", "a.py:4:h", "c.py:1:gold"]  # TREC: symbols, as before
    declared = type("Declared", (Fixed,), {"GRANULARITY": "file"})
    assert evaluate_run(declared(ctx), [task], symbols, ["fixed"], 10)[0]["fixed"]["granularity"] == "file"
    files_gold = Task("t2", "the gold file", "short_phrase", {"type": "file_set", "file_set": ["c.py"]}, "c")
    paths = type("Paths", (Fixed,), {"HITS": [Hit(h.path, "", "", 0, 0, h.score) for h in Fixed.HITS]})
    inferred = evaluate_run(paths(ctx), [files_gold], symbols, ["fixed"], 10)[0]["fixed"]
    assert (inferred["granularity"], inferred["metrics"]["mrr"]) == ("file", 1 / 3)  # no hit names a symbol
    wrong = type("Wrong", (Fixed,), {"GRANULARITY": "files"})
    with pytest.raises(CrmatrixError, match="^method fixed: granularity 'files': expected one of file, symbol, span$"):
        evaluate_run(wrong(ctx), [task], symbols, ["fixed"], 10)


def test_the_leaderboard_of_a_file_level_tool_and_the_builtin_ranks_at_file_level(prepared, tmp_path):
    conf = system_conf("command", PATHS)
    index = build_index(prepared, tmp_path, conf)
    runs = [evaluate(prepared, tmp_path, "paths", conf, WEAKEST, index=index),
            evaluate(prepared, tmp_path, "builtin", system_conf("builtin", {}, methods=["lexical"]))]
    cells = [cellstats.cell(r, None, "search") for r in runs]
    paths_cell = next(c for c in cells if c.system == "paths")
    assert paths_cell.granularity == "file" and paths_cell.cell.mean == 0.0
    assert paths_cell.cell.file_level.mean == pytest.approx(FILE_MRR)
    assert sorted(q.file for q in paths_cell.queries) == pytest.approx([1 / 3, 1 / 3, 1 / 2])
    m = assemble.assemble(cells, "baseline", "search", ["baseline"], reference="builtin")
    board = m.leaderboard
    assert board.level == "file"
    assert [(s.system, s.mean) for s in board.standings] == [("builtin", 1.0), ("paths", pytest.approx(FILE_MRR))]
    assert [(s.system, s.mean) for s in board.symbol_level.standings] == [("builtin", 1.0)]
    assert board.symbol_level.pairs == ()
    md = to_markdown(m)
    assert "Ranked at **file level**, the finest every system answers (paths: files)" in md
    start = md.index("### Symbol level: the systems answering symbols")
    symbol = md[start:md.index("\n## ", start)]
    assert "| 1 | builtin | lexical | 1 | 3 | 1.000 | reference |" in symbol and "| paths |" not in symbol
    start = md.index("## File level")
    files = md[start:md.index("\n## ", start)]
    assert "| ds | paths | search | 0.389 [" in files
    compared = versus.compare(runs, "builtin", "search")  # what the chart draws, from the runs
    assert compared.level == "file" and compared.systems == ("builtin", "paths")
    assert [(c.system, c.mean) for c in compared.scores] == [("builtin", 1.0), ("paths", pytest.approx(FILE_MRR))]
    assert "at file level, the finest every system answers" in " ".join(
        plots_leaderboard.draw(compared).to_dict()["title"]["subtitle"])


def test_systems_answering_symbols_rank_at_symbol_level(prepared, tmp_path):
    conf = system_conf("command", LINES)
    runs = [evaluate(prepared, tmp_path, "lines", conf, WEAKEST, index=build_index(prepared, tmp_path, conf)),
            evaluate(prepared, tmp_path, "builtin", system_conf("builtin", {}, methods=["lexical"]))]
    m = assemble.assemble([cellstats.cell(r, None, "search") for r in runs], "baseline", "search", ["baseline"],
                          reference="builtin")
    assert (m.leaderboard.level, m.leaderboard.symbol_level) == ("symbol", None)
    assert [(s.system, s.mean) for s in m.leaderboard.standings] == [("builtin", 1.0), ("lines", 0.25)]
    md = to_markdown(m)
    assert "Ranked at **symbol level**" in md and "### Symbol level" not in md


def test_an_unknown_granularity_is_refused_naming_the_option():
    with pytest.raises(CrmatrixError) as e:
        system_conf("command", {**PATHS, "granularity": "line"})
    assert str(e.value) == ("config: systems.fake.options.granularity: expected one of: file, symbol, span, "
                            "got a string 'line'")

