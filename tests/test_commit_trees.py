"""Any system on a repository of many commits (crmatrix.versions.commits): the command fake's
index built once per distinct tree of the commits, each task answered at its own commit's tree
and resolved against that commit's symbols, and a later commit indexing its tree alone; an MCP
server and an in-process plugin reading files started on each commit's tree."""

import json
from pathlib import Path

import pytest
from test_swebench_workflow import FILES_1, URL, bundle, row
from test_systems import FAKE_CLI, HITS, MCP, system_conf

from crmatrix import CrmatrixError, atomic
from crmatrix.evaluation.cell import CellJob
from crmatrix.hits import Hit
from crmatrix.stages import build_system_index, evaluate_arm, extract_repository, fetch_repository, localize_tasks
from crmatrix.systems import registry
from crmatrix.systems.registry import System
from crmatrix.versions import trees

INDEXED = {"index": [*FAKE_CLI, "index", "{corpus}", "{index}"],
           "search": [*FAKE_CLI, "search", "{index}", "{query}", "{k}"], **HITS}
# the second commit adds a function that only it holds
DIFFERENT = {**FILES_1, "pkg/merge.py": "def merge_defaults(values):\n    return values\n"}
MERGE_PATCH = ("diff --git a/pkg/merge.py b/pkg/merge.py\n--- a/pkg/merge.py\n+++ b/pkg/merge.py\n"
               "@@ -1,2 +1,2 @@\n def merge_defaults(values):\n-    return values\n+    return DEFAULTS | values\n")
# ... or edits no candidate file: the two commits' trees are one
SAME = {**FILES_1, "README.md": "widget\n"}


def repository(tmp: Path, versions: tuple[dict, ...], results: Path | None = None) -> tuple[Path, list[str]]:
    """The repository's commits (fetch_repository) and their symbols (extract_repository), under
    `results` (default tmp/results)."""
    mirror, shas = bundle(tmp, versions)
    results = results or tmp / "results"
    repo, store = results / "repos" / "widget", results / "symbols" / "widget"
    fetch_repository.run("widget", {"git": URL, "include": ["**/*.py"], "commits": shas}, repo, [str(mirror)])
    extract_repository.run(repo, store, tmp / "stats.json", tmp / "cache")
    return repo, shas


def tasks(tmp: Path, repo: Path, rows: list[dict]) -> Path:
    (tmp / "sb.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    localize_tasks.run(file=tmp / "sb.jsonl", repository=repo, store=repo.parent.parent / "symbols" / "widget",
                       corpus="widget", repo="acme/widget", level="files", out=tmp / "tasks.jsonl",
                       qrels=tmp / "qrels.txt", summary=tmp / "summary.json")
    return tmp / "tasks.jsonl"


def index(tmp: Path, repo: Path, conf: dict) -> dict:
    return build_system_index.run_commits(system="fake", system_conf=conf, repository=repo, env={},
                                          out=tmp / "index", cache=tmp / "tree-index", home_dir=tmp / "home")


def evaluate(tmp: Path, repo: Path, conf: dict, with_index: bool = True) -> dict:
    inputs = {"tasks": tmp / "tasks.jsonl", "dataset_file": tmp / "sb.jsonl", "repository": repo,
              "store": repo.parent.parent / "symbols" / "widget", **({"index": tmp / "index"} if with_index else {})}
    params = {"system_conf": conf, "env": {}, "top_k": 10, "split": {"split": "all", "seed": None},
              "home_dir": tmp / "home"}
    return evaluate_arm.run(CellJob("sb", "fake", "a", inputs, params, {"run": tmp / "run.json"})).to_json()


def test_one_index_per_distinct_tree_and_each_task_answered_at_its_commit(tmp_path):
    repo, (first, second) = repository(tmp_path, (FILES_1, DIFFERENT))
    tasks(tmp_path, repo, [row("acme__widget-1", "acme/widget", first, "parse config splits a value in two"),
                           row("acme__widget-2", "acme/widget", second, "merge defaults into the values", MERGE_PATCH)])
    conf = system_conf("command", INDEXED)
    listing = index(tmp_path, repo, conf)
    keys = {c: trees.tree_key(f) for c, f in json.loads((repo / "commits.json").read_text()).items()
            for f in [[(p, b) for p, b, _ in f]]}
    assert (listing["built"], listing["reused"]) == (2, 0)
    assert {k: t["commits"] for k, t in listing["trees"].items()} == {keys[first]: [first], keys[second]: [second]}
    assert all(t["bytes"] > 0 and t["seconds"] > 0 for t in listing["trees"].values())
    run = evaluate(tmp_path, repo, conf)
    q1, q2 = run["methods"]["search"]["queries"]
    assert (q1["top_candidate"]["symbol"], q1["rank"]) == ("parse_config", 1)
    # merge_defaults is a symbol of the second commit alone: asked at the first, the tool would find nothing
    assert (q2["top_candidate"]["symbol"], q2["rank"], q2["failure"]) == ("merge_defaults", 1, None)
    assert {k: run["methods"]["search"]["metrics"][k] for k in ("n", "acc@1", "mrr", "coverage")} == {
        "n": 2, "acc@1": 1.0, "mrr": 1.0, "coverage": 1.0}
    costs = run["provenance"]["system_run"]["trees"]
    assert {k: (t["commits"], t["calls"], t["index"]["built"]) for k, t in costs.items()} == {
        keys[first]: ([first], 1, True), keys[second]: ([second], 1, True)}
    assert all(t["query_ms"]["p95"] >= t["query_ms"]["p50"] > 0 for t in costs.values())
    # each tree's files are hard links to one blob store: a file both commits hold is one inode
    root = trees.trees_root(repo)
    store = [(root / keys[c] / "pkg/store.py").stat().st_ino for c in (first, second)]
    assert store[0] == store[1]

    # the repository made again with a third commit: the index job builds its tree's index alone
    third = {**DIFFERENT, "pkg/net.py": "def fetch(url, timeout):\n    return url\n"}
    (tmp_path / "v2").mkdir()
    repo, shas = repository(tmp_path / "v2", (FILES_1, DIFFERENT, third), tmp_path / "results")
    again = index(tmp_path, repo, conf)
    assert (again["built"], again["reused"]) == (1, 2)
    built, = [t["commits"] for t in again["trees"].values() if t["built"]]
    assert built == [shas[2]] and shas[2] not in (first, second)


def test_commits_with_the_same_candidate_files_share_one_tree_and_one_index(tmp_path):
    repo, (first, second) = repository(tmp_path, (FILES_1, SAME))
    tasks(tmp_path, repo, [row("acme__widget-1", "acme/widget", first, "parse config splits a value in two"),
                           row("acme__widget-2", "acme/widget", second, "parse config at the second commit")])
    conf = system_conf("command", INDEXED)
    listing = index(tmp_path, repo, conf)
    (key, tree), = listing["trees"].items()
    assert (listing["built"], tree["commits"]) == (1, sorted([first, second]))
    run = evaluate(tmp_path, repo, conf)
    assert [q["rank"] for q in run["methods"]["search"]["queries"]] == [1, 1]
    costs = run["provenance"]["system_run"]["trees"]
    assert list(costs) == [key] and costs[key]["calls"] == 2 and costs[key]["commits"] == sorted([first, second])


def test_a_tool_without_an_index_runs_on_each_commits_tree(tmp_path):
    repo, (first, second) = repository(tmp_path, (FILES_1, DIFFERENT))
    tasks(tmp_path, repo, [row("acme__widget-2", "acme/widget", second, "merge defaults into the values", MERGE_PATCH)])
    # a search that reads the tree itself: the fake indexes its {corpus} into $HOME at each call
    conf = system_conf("command", {"search": ["sh", "-c", f"{' '.join(FAKE_CLI)} index \"$0\" \"$HOME/i\" && "
                                              f"{' '.join(FAKE_CLI)} search \"$HOME/i\" \"$1\" \"$2\"",
                                              "{corpus}", "{query}", "{k}"], **HITS})
    run = evaluate(tmp_path, repo, conf, with_index=False)
    q, = run["methods"]["search"]["queries"]
    assert (q["top_candidate"]["symbol"], q["rank"]) == ("merge_defaults", 1)
    assert "index" not in next(iter(run["provenance"]["system_run"]["trees"].values()))


def test_an_index_listing_missing_a_commits_tree_is_refused(tmp_path):
    repo, (first, second) = repository(tmp_path, (FILES_1, DIFFERENT))
    tasks(tmp_path, repo, [row("acme__widget-2", "acme/widget", second, "merge defaults into the values", MERGE_PATCH)])
    conf = system_conf("command", INDEXED)
    listing = index(tmp_path, repo, conf)
    del listing["trees"][trees.tree_key([(p, b) for p, b, _ in atomic.read_json(repo / "commits.json")[second]])]
    (tmp_path / "index" / "crmatrix-checksums.json").unlink()
    atomic.write_json(tmp_path / "index" / "crmatrix-index.json", listing)
    from crmatrix import integrity

    integrity.record(tmp_path / "index")
    with pytest.raises(CrmatrixError, match=r"no index of tree [0-9a-f]{16} \(made before its commits were fetched"):
        evaluate(tmp_path, repo, conf)


class TreeReader(System):
    """A plugin that reads its corpus's files itself: it answers each `def` whose name holds a query word."""

    METHODS = ("names",)

    def __init__(self, ctx):
        super().__init__(ctx)
        self.defs = [(p.relative_to(ctx.corpus_dir).as_posix(), line.split("def ", 1)[1].split("(")[0], n)
                     for p in sorted(Path(ctx.corpus_dir).rglob("*.py"))
                     for n, line in enumerate(p.read_text().splitlines(), 1) if line.startswith("def ")]

    def search(self, query, method, k):
        words = set(query.split())
        return [Hit(path, name, "function", n, n, 1.0) for path, name, n in self.defs if words & set(name.split("_"))]


@pytest.fixture
def tree_reader():
    registry.register("test-tree-reader")(TreeReader)
    yield
    del registry.TYPES.own["test-tree-reader"]


@pytest.mark.parametrize("kind", ["mcp", "test-tree-reader"])
def test_an_mcp_server_and_a_plugin_each_run_on_each_commits_tree(tmp_path, kind, tree_reader):
    repo, (first, second) = repository(tmp_path, (FILES_1, DIFFERENT))
    tasks(tmp_path, repo, [row("acme__widget-1", "acme/widget", first, "parse config splits a value in two"),
                           row("acme__widget-2", "acme/widget", second, "merge defaults into the values", MERGE_PATCH)])
    conf = system_conf(kind, MCP if kind == "mcp" else {})
    run = evaluate(tmp_path, repo, conf, with_index=False)
    (method, result), = run["methods"].items()
    assert [(q["top_candidate"]["symbol"], q["rank"]) for q in result["queries"]] == [
        ("parse_config", 1), ("merge_defaults", 1)]
    assert len(run["provenance"]["system_run"]["trees"]) == 2


def test_a_tool_that_reads_git_gets_a_checkout_of_its_commits_files_and_writes_nothing(tmp_path):
    repo, (first, second) = repository(tmp_path, (FILES_1, DIFFERENT))
    tasks(tmp_path, repo, [row("acme__widget-2", "acme/widget", second, "merge defaults into the values", MERGE_PATCH)])
    script = ('cd "$0" && git ls-files > "$HOME/ls.txt" && git status --porcelain > "$HOME/status.txt" && '
              'git rev-parse --show-toplevel > "$HOME/top.txt" && git log --format=%s > "$HOME/log.txt" && '
              f'{" ".join(FAKE_CLI)} search "$1" "$2" "$3"')
    conf = system_conf("command", {**INDEXED, "search": ["sh", "-c", script, "{corpus}", "{index}", "{query}", "{k}"]})
    index(tmp_path, repo, conf)
    run = evaluate(tmp_path, repo, conf)  # a write into the tree's mirror (an index refreshed) would stop it
    q, = run["methods"]["search"]["queries"]
    assert (q["top_candidate"]["symbol"], q["rank"], q["failure"]) == ("merge_defaults", 1, None)
    key = trees.tree_key([(p, b) for p, b, _ in atomic.read_json(repo / "commits.json")[second]])
    home = tmp_path / "home" / key
    assert (home / "ls.txt").read_text().split() == sorted(DIFFERENT)  # the candidate files, all .py
    assert (home / "status.txt").read_text() == ""
    assert (home / "log.txt").read_text() == "crmatrix: the commit's candidate files\n"
    top = Path((home / "top.txt").read_text().strip())
    assert top.name == key and top != trees.trees_root(repo) / key  # the read-only mirror, not the tree


def test_a_failing_index_command_names_the_tree_its_commits_and_the_tools_last_words(tmp_path):
    repo, (first, _) = repository(tmp_path, (FILES_1, SAME))
    # the tree is a git checkout of one commit: committing it again has nothing to commit, and
    # git says so on stdout, not stderr
    conf = system_conf("command", {"index": ["sh", "-c", 'cp -R "$0/." "$1/repo" && cd "$1/repo" && git add -A && '
                                             "git -c user.name=t -c user.email=t@t commit -qm again",
                                             "{corpus}", "{index}"], "search": ["true"], **HITS})
    key, = trees.commit_trees(repo)
    commits = sorted(trees.commit_trees(repo)[key])
    with pytest.raises(CrmatrixError) as e:
        index(tmp_path, repo, conf)
    assert str(e.value) == (f"widget: tree {key} (commit {', '.join(c[:12] for c in commits)}): systems.fake: index "
                            "command failed (crash): index: exit status 1: nothing to commit, working tree clean")
    assert not (tmp_path / "tree-index" / key).exists()
