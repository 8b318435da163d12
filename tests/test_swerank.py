"""SweRank's protocol on a tiny repository: its tasks (those that edit an existing function, at
file level) and its BM25 (`swerank-bm25`: the functions and methods of the files SweRank's rule
keeps, a file ranked at its first function)."""

import json

import numpy as np
import pytest
from test_swebench_workflow import URL, bundle, row

from crmatrix import CrmatrixError, atomic, config
from crmatrix.datasets import relevance, swebench
from crmatrix.engine import Engine
from crmatrix.engine.bm25 import BM25Index
from crmatrix.stages import extract_repository, fetch_repository, localize_tasks
from crmatrix.versions.store import SymbolStore

FILES = {
    # a class whose name and docstring say "settings", whose one method does not
    "pkg/settings.py": ('class SettingsLoader:\n    """Settings loader: settings from settings files."""\n\n'
                        '    def run(self, path):\n        return open(path).read()\n\n\n'
                        'LIMIT = 10\n'),
    "pkg/config.py": ('def parse_config(text):\n    """Read settings."""\n'
                      '    return dict(line.split("=") for line in text.splitlines())\n'),
    # agentless keeps it, SweRank's rule (no path holding `test`) does not
    "pkg/contest.py": 'def settings_settings(settings):\n    """settings settings settings"""\n    return settings\n',
    "pkg/net.py": "def fetch(url):\n    return url\n",
}
FUNCTION_PATCH = ("diff --git a/pkg/config.py b/pkg/config.py\n--- a/pkg/config.py\n+++ b/pkg/config.py\n"
                  "@@ -1,3 +1,3 @@\n def parse_config(text):\n     \"\"\"Read settings.\"\"\"\n"
                  "-    return dict(line.split(\"=\") for line in text.splitlines())\n"
                  "+    return dict(line.split(\"=\", 1) for line in text.splitlines())\n")
# a module-level constant alone: file gold, no function gold
MODULE_PATCH = ("diff --git a/pkg/settings.py b/pkg/settings.py\n--- a/pkg/settings.py\n+++ b/pkg/settings.py\n"
                "@@ -7,2 +7,2 @@\n \n-LIMIT = 10\n+LIMIT = 20\n")


@pytest.fixture
def repository(tmp_path):
    """The repository fetched under agentless's rule and extracted: (its dir, its store, the commit)."""
    mirror, (sha,) = bundle(tmp_path, (FILES,))
    repo = tmp_path / "repo"
    manifest = fetch_repository.run("widget", {"git": URL, "include": ["**/*.py"], "commits": [sha],
                                               "candidates": "agentless", "repository": "acme/widget"},
                                    repo, [str(mirror)])
    assert manifest["repository"] == "acme/widget"  # what the builtin hands its engine (SweRank's rule reads it)
    extract_repository.run(repo, tmp_path / "store", tmp_path / "stats.json", tmp_path / "cache")
    return repo, tmp_path / "store", sha


def test_swerank_tasks_are_those_that_edit_a_function_at_file_level(repository, tmp_path):
    repo, store, sha = repository
    rows = [row("acme__widget-1", "acme/widget", sha, "parse_config splits a value holding '=' in two",
                FUNCTION_PATCH),
            row("acme__widget-2", "acme/widget", sha, "raise the limit", MODULE_PATCH)]
    (tmp_path / "sb.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    counts = {}
    for subset in ("all", "functions"):
        out = tmp_path / subset
        kept = localize_tasks.run(file=tmp_path / "sb.jsonl", repository=repo, store=store, corpus="widget",
                                  repo="acme/widget", level="files", out=out / "t.jsonl", qrels=out / "q.qrels",
                                  summary=out / "s.json", tasks=subset)
        summary = atomic.read_json(out / "s.json")
        counts[subset] = (len(kept), summary["tasks"], summary["dropped_by_reason"], summary["gold"].get("tasks"))
    assert counts == {"all": (2, 2, {}, None), "functions": (1, 1, {"no gold function": 1}, "functions")}
    # the kept task's gold is still its files
    assert json.loads((tmp_path / "functions" / "t.jsonl").read_text())["gold"] == {
        "type": "file_set", "file_set": ["pkg/config.py"]}
    with pytest.raises(CrmatrixError, match=r"^swe-bench: tasks 'some': expected one of all, functions$"):
        swebench.tasks([], swebench.FILES, lambda r, c: "c", subset="some")


def test_swerank_bm25_ranks_functions_of_swerank_files_alone_each_file_at_its_first_function(repository):
    _, store, sha = repository
    symbols = SymbolStore(store).symbols_of(sha)
    engine = Engine(symbols)
    # SweRank's corpus: functions and methods (no class, nothing at module level), none of pkg/contest.py
    corpus = [s for s in symbols if s.kind in ("function", "method") and "test" not in s.path]
    assert [(s.path, s.name) for s in corpus] == [("pkg/config.py", "parse_config"), ("pkg/net.py", "fetch"),
                                                  ("pkg/settings.py", "run")]
    for query in ("settings", "open path read url"):
        # BM25 over that corpus alone: its own document count, frequencies and lengths
        want = BM25Index.build(corpus).scores(query)
        ranked = sorted(((-float(v), s.path, s.start_line, s.name) for s, v in zip(corpus, want, strict=True) if v > 0))
        hits = engine.search(query, "swerank-bm25", 10)
        assert [(h.path, h.symbol, -h.score) for h in hits] == [(p, n, v) for v, p, _, n in ranked]
    # "settings": the method (its class's name is in its qualified name) and parse_config (its
    # docstring); the symbol BM25 ranks the class and the function SweRank leaves out above them
    hits = engine.search("settings", "swerank-bm25", 10)
    assert [(h.path, h.symbol, h.kind) for h in hits] == [("pkg/settings.py", "run", "method"),
                                                          ("pkg/config.py", "parse_config", "function")]
    assert [(h.path, h.symbol) for h in engine.search("settings", "bm25", 2)] == [
        ("pkg/contest.py", "settings_settings"), ("pkg/settings.py", "SettingsLoader")]
    # files ranked at their first function: pkg/settings.py at its method's rank, pkg/config.py next
    gold = {"type": "file_set", "file_set": ["pkg/config.py"]}
    assert relevance.ranked_units(gold, hits) == [("pkg/settings.py", False), ("pkg/config.py", True)]


def test_swerank_bm25_of_a_corpus_without_functions_finds_nothing():
    from crmatrix.symbols import Symbol

    cls = Symbol("SettingsLoader", "class", "", "pkg/settings.py", "python", 1, 3, "", "settings", "")
    assert Engine([cls]).search("settings", "swerank-bm25", 5) == []
    assert np.isnan(Engine([cls]).swerank_bm25_scores("settings")).all()


def test_swerank_bm25_reads_pytests_files_by_their_names_as_swerank_does():
    from crmatrix.symbols import Symbol

    def fn(path):
        return Symbol("collect", "function", "", path, "python", 1, 3, "def collect()", "collect items", "")

    symbols = [fn("src/_pytest/python.py"), fn("src/_pytest/pytester.py")]
    assert [h.path for h in Engine(symbols, repository="pytest-dev/pytest").search("collect", "swerank-bm25", 5)] == [
        "src/_pytest/python.py"]
    assert Engine(symbols, repository="psf/requests").search("collect", "swerank-bm25", 5) == []


def test_a_dataset_keeps_the_tasks_that_edit_a_function_by_its_tasks_key(tmp_path, monkeypatch):
    mirror, (sha,) = bundle(tmp_path, (FILES,))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sb.jsonl").write_text(json.dumps(row("acme__widget-1", "acme/widget", sha, "x")) + "\n")
    raw = {"git_mirrors": [str(mirror)], "repositories": {"widget": {"git": URL}},
           "datasets": {"sb": {"format": "swe-bench", "file": "sb.jsonl", "tasks": "functions"}},
           "systems": {"builtin": {"type": "builtin", "methods": ["hybrid", "swerank-bm25"]}}, "arms": {"baseline": {}}}
    m = config.from_dict(raw)
    assert m.datasets["sb-widget"].conf["tasks"] == "functions"
    assert list(m.systems["builtin"].methods) == ["hybrid", "swerank-bm25"]
    (tmp_path / "q.json").write_text("[]")
    raw["datasets"]["q"] = {"file": "q.json", "corpus": "widget", "tasks": "functions"}
    with pytest.raises(CrmatrixError,
                       match=r"^config: datasets\.q\.tasks: only a swe-bench or history dataset keeps the tasks "):
        config.from_dict(raw)


def test_the_benchmark_section_names_swerank_s_task_subset_per_repository_and_pooled():
    from crmatrix.analysis.matrix import markdown
    from crmatrix.results.cell import Scored
    from crmatrix.results.matrix import BenchmarkEntry, Dropped, PooledBenchmark

    scores = {"baseline": {"acc_all@1": Scored(mean=0.5, ci_low=0.0, ci_high=1.0)}}

    def entry(dataset, subset):
        gold = {"candidates": "agentless", "tasks_outside_candidates": 0, "files_outside_candidates": 0,
                **({"tasks": subset} if subset else {})}
        return BenchmarkEntry(dataset=dataset, system="swerank", method="swerank-bm25", format="swe-bench",
                              metrics=("acc_all@1",), arms=scores, strata={},
                              dropped=Dropped(tasks=2, dropped=1, by_reason={"no gold function": 1}, gold=gold))

    pool = PooledBenchmark(benchmark="lite-fn", system="swerank", method="swerank-bm25", format="swe-bench",
                           datasets=("lite-fn-a", "lite-fn-b"), n=4, metrics=("acc_all@1",), arms=scores)
    md = "\n".join(markdown._benchmarks_md((entry("lite-fn-a", "functions"), entry("lite-fn-b", "functions")),
                                           (pool,), ("baseline",)))
    assert ("**lite-fn · swerank** (swe-bench, swerank-bm25), pooled: 4 tasks of 2 datasets (lite-fn-a, lite-fn-b); "
            "candidate files: agentless; tasks: those that edit a function\n") in md
    assert ("**lite-fn-a · swerank** (swe-bench, swerank-bm25)\n\n2 tasks; 1 rows or citations dropped: "
            "1 no gold function; candidate files: agentless; 0 tasks with 0 gold files outside them, kept as misses; "
            "tasks: those that edit a function\n") in md
    # all tasks: no word of a subset
    md = "\n".join(markdown._benchmarks_md((entry("lite-fn-a", None), entry("lite-fn-b", None)), (pool,),
                                           ("baseline",)))
    assert "tasks: those that edit a function" not in md
