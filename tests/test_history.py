"""The history format: localization tasks from a repository's own commits, on a repository the
test makes (fixed dates, so the same hashes every time), through the stages that run it; and the
four history bundles of ../shared."""

import json
import os
import subprocess
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import SHARED, needs_shared

from crmatrix import CrmatrixError, atomic, config
from crmatrix.corpora import testfiles
from crmatrix.corpora.pins import gitstore
from crmatrix.datasets import history, patches
from crmatrix.datasets.history import Options
from crmatrix.stages import extract_repository, fetch_repository, localize_tasks

URL = "https://example.invalid/acme/widget"
CORE = ('def parse_config(text):\n    """Parse the settings text."""\n'
        '    return dict(line.split("=") for line in text.splitlines())\n\n\n'
        "class Store:\n    def save(self, key, value):\n        self.data[key] = value\n")
SERVER = ("package pkg\n\nfunc Serve(addr string) error {\n\treturn nil\n}\n\n"
          "func handle(input string) string {\n\treturn input\n}\n")
HUMAN, BOT = ("Ada", "ada@example.org"), ("dependabot[bot]", "49699333+dependabot[bot]@users.noreply.github.com")


class Repo:
    """A repository made commit by commit, day by day from 2026-01-01."""

    def __init__(self, path: Path):
        self.path, self.day = path, 0
        path.mkdir(parents=True)
        self.git("init", "-q", "-b", "main")

    def git(self, *args: str, author: tuple[str, str] = HUMAN) -> str:
        when = f"2026-01-{self.day + 1:02d}T12:00:00Z"
        env = {**os.environ, "GIT_AUTHOR_NAME": author[0], "GIT_AUTHOR_EMAIL": author[1], "GIT_COMMITTER_NAME": "c",
               "GIT_COMMITTER_EMAIL": "c@c", "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
        return subprocess.run(["git", *args], cwd=self.path, check=True, capture_output=True, text=True,
                              env=env).stdout.strip()

    def commit(self, message: str, files: dict[str, str | None], author: tuple[str, str] = HUMAN) -> str:
        for path, text in files.items():
            if text is None:
                (self.path / path).unlink()
            else:
                (self.path / path).parent.mkdir(parents=True, exist_ok=True)
                (self.path / path).write_text(text)
        self.git("add", "-A")
        self.git("commit", "-q", "-m", message, author=author)
        self.day += 1
        return self.git("rev-parse", "HEAD")


def make_history(path: Path) -> tuple[Repo, dict[str, str]]:
    """A history with one commit for each rule: name -> commit."""
    r, c = Repo(path), {}
    c["root"] = r.commit("Import the widget project with its core and server", {
        "pkg/core.py": CORE, "pkg/server.go": SERVER, "tests/test_core.py": "def test_parse():\n    assert True\n",
        "README.md": "widget\n"})
    c["python"] = r.commit("Make settings parsing tolerate blank lines in the input", {
        "pkg/core.py": CORE.replace("text.splitlines())", "text.splitlines() if line)")})
    c["go"] = r.commit("Return a clear error when the handler gets bad input", {
        "pkg/server.go": SERVER.replace("\treturn input\n", '\tif input == "" {\n\t\treturn "empty"\n\t}\n'
                                        "\treturn input\n")})
    c["adds"] = r.commit("Add an extra helper module for later use", {"pkg/extra.py": "def extra():\n    pass\n"})
    c["tests"] = r.commit("Cover blank lines in the parser tests as well", {
        "tests/test_core.py": "def test_parse():\n    assert 1\n", "README.md": "widget, a parser\n"})
    core = (r.path / "pkg/core.py").read_text()
    c["whitespace"] = r.commit("Tidy the whitespace of the core module here", {
        "pkg/core.py": core.replace("    return dict", "    return  dict")})
    c["short"] = r.commit("fix typo", {"pkg/core.py": core.replace("settings text", "settings' text")})
    core = (r.path / "pkg/core.py").read_text()
    c["bot"] = r.commit("Update the store so that values are copied first", {
        "pkg/core.py": core.replace("= value", "= value  # copied")}, author=BOT)
    c["revert"] = r.commit(f'Revert "Make settings parsing tolerate"\n\nThis reverts commit {c["python"]}.', {
        "pkg/core.py": core.replace("if line)", ")")})
    c["release"] = r.commit("Release 1.2.0 with every fix above in it", {"pkg/server.go": SERVER + "\n// 1.2.0\n"})
    c["deps"] = r.commit("chore(deps): bump golang.org/x/net from 0.1 to 0.2", {"pkg/server.go": SERVER})
    c["many"] = r.commit("Rename the parser and server helpers in one go", {
        "pkg/core.py": core.replace("parse_config", "read_config"),
        "pkg/server.go": SERVER.replace("handle", "serveOne")})
    core = (r.path / "pkg/core.py").read_text()
    c["leaky"] = r.commit("Fix Store.save so that core.py keeps the value\n\nSigned-off-by: Ada <ada@example.org>",
                          {"pkg/core.py": core.replace("self.data[key] = value", "self.data[key] = list(value)")})
    r.git("checkout", "-q", "-b", "side")
    c["side"] = r.commit("Serve on every address the caller gives us", {
        "pkg/server.go": (r.path / "pkg/server.go").read_text().replace("return nil", "return nil // any")})
    r.git("checkout", "-q", "main")
    r.git("merge", "-q", "--no-ff", "-m", "Merge branch side into main for the release", "side")
    c["merge"] = r.git("rev-parse", "HEAD")
    return r, c


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    return make_history(tmp_path_factory.mktemp("history") / "widget")


def derive(repo: Repo, **options) -> tuple[list, list[dict]]:
    return history.derive(repo.path / ".git", "acme/widget", Options(**options), ref="refs/heads/main")


def test_each_rule_drops_its_commit_and_the_rest_are_tasks_at_their_parent(made):
    repo, c = made
    rows, dropped = derive(repo, max_files=1)
    reasons = {d["instance_id"]: d["reason"] for d in dropped}
    by_name = {name: reasons.get(history.instance_id("acme/widget", sha)) for name, sha in c.items()}
    assert by_name == {
        "root": "root commit", "python": None, "go": None, "adds": "only adds or deletes files",
        "tests": "no source file modified", "whitespace": "formatting only", "short": "short message",
        "bot": "bot author", "revert": "revert", "release": "release", "deps": "dependency bump",
        "many": "too many files", "leaky": None, "side": None, "merge": "merge"}
    assert [r.instance_id for r in rows] == [history.instance_id("acme/widget", c[n])
                                           for n in ("side", "leaky", "go", "python")]
    parent = {r.instance_id: r.base_commit for r in rows}
    assert parent[history.instance_id("acme/widget", c["python"])] == c["root"]
    assert parent[history.instance_id("acme/widget", c["side"])] == c["leaky"]
    assert {r.instance_id: [d.old_path for d in r.diffs] for r in rows}[
        history.instance_id("acme/widget", c["go"])] == ["pkg/server.go"]
    # the trailer is cut from the query
    assert rows[1].problem_statement == "Fix Store.save so that core.py keeps the value"
    # by default (5 files) the two-file rename is a task too
    assert history.instance_id("acme/widget", c["many"]) in {r.instance_id for r in derive(repo)[0]}


def test_the_window_and_the_sample(made):
    repo, c = made
    rows, dropped = derive(repo, since="2026-01-03", until="2026-01-14", max_files=1)
    assert [r.instance_id[-12:] for r in rows] == [c["leaky"][:12], c["go"][:12]]
    # root, python (days 1, 2); side, merge (days 14, 15)
    assert Counter(d["reason"] for d in dropped)["outside window"] == 4
    rows, _ = derive(repo, last=3)  # the merge, side and leaky
    assert [r.instance_id[-12:] for r in rows] == [c["side"][:12], c["leaky"][:12]]
    first, drops = derive(repo, sample=2, seed=7)
    assert len(first) == 2 and Counter(d["reason"] for d in drops)["not sampled"] == 3  # of 5
    assert [r.instance_id[-12:] for r in first] == [c["leaky"][:12], c["many"][:12]]
    assert first == derive(repo, sample=2, seed=7)[0]
    samples = {tuple(r.instance_id for r in derive(repo, sample=2, seed=s)[0]) for s in range(8)}
    assert len(samples) > 1  # the seed decides


def test_bad_options_are_named():
    with pytest.raises(CrmatrixError, match=r"datasets.h.history.since: '2026-13-01' is not a day"):
        Options.from_conf({"since": "2026-13-01"}, "datasets.h.history")
    with pytest.raises(CrmatrixError, match=r"h: unknown option\(s\) files"):
        Options.from_conf({"files": 3}, "h")
    with pytest.raises(CrmatrixError, match=r"h.sample: 0: expected a whole number of 1 or more"):
        Options.from_conf({"sample": 0}, "h")


@pytest.mark.parametrize(("path", "test"), [
    ("pkg/core.py", False), ("tests/test_core.py", True), ("pkg/test_core.py", True), ("pkg/core_test.py", True),
    ("pkg/conftest.py", True), ("server.go", False), ("server_test.go", True), ("testdata/x.go", True),
    ("lib/router.js", False), ("lib/router.test.js", True), ("src/a.spec.ts", True), ("__tests__/a.js", True),
    ("test/app.router.js", True), ("src/lib.rs", False), ("benches/search.rs", True), ("tests/misc.rs", True),
    ("src/main/java/A.java", False), ("src/test/java/ATest.java", True), ("README.md", True)])
def test_the_test_rules_per_language(path, test):
    assert testfiles.is_source(path) is not test


def test_a_message_naming_a_gold_file_or_function_is_leaky():
    assert history.leaked("Fix Store.save so that core.py keeps it", ["pkg/core.py"], ["save"]) == ["core.py", "save"]
    assert history.leaked("Tweak pkg/core.py", ["pkg/core.py"], []) == ["core.py", "pkg/core.py"]
    assert history.leaked("Save values in the score module", ["pkg/core.py"], ["save", "id"]) == []
    assert history.leaked("Use the id field", ["a.py"], ["id"]) == []  # shorter than MIN_NAME


def make_mirror(repo: Repo, where: Path) -> Path:
    mirror = where / "mirror"
    mirror.mkdir()
    repo.git("bundle", "create", "-q", str(mirror / "acme+widget@history.bundle"), "main")
    return mirror


def test_the_store_fetches_the_history_and_tasks_are_localized_at_their_parents(made, tmp_path):
    repo, c = made
    mirror = make_mirror(repo, tmp_path)
    rows, _ = derive(repo, max_files=1)
    corpus = {"git": URL, "include": ["**"], "history": True, "commits": sorted({r.base_commit for r in rows}),
              "candidates": "language"}
    manifest = fetch_repository.run("widget", corpus, tmp_path / "repo", [str(mirror)])
    # the language's tests are no candidates: listed apart, one test file at each of the 4 parents
    assert (manifest["candidates"], manifest["outside_candidates"]) == ("language", 4)
    assert {c: [p for p, _ in fs] for c, fs in atomic.read_json(tmp_path / "repo" / "outside.json").items()} == {
        commit: ["tests/test_core.py"] for commit in corpus["commits"]}
    extract_repository.run(tmp_path / "repo", tmp_path / "store", tmp_path / "stats.json", tmp_path / "cache")
    out = {}
    for level in ("files", "functions"):
        tasks = localize_tasks.run(
            file=mirror / "acme+widget@history.bundle", repository=tmp_path / "repo", store=tmp_path / "store",
            corpus="widget", repo="acme/widget", level=level, out=tmp_path / f"{level}.jsonl",
            qrels=tmp_path / f"{level}.qrels", summary=tmp_path / f"{level}.json", options={"max_files": 1})
        out[level] = {t.task_id[-12:]: (t.corpus, t.query_type, t.stratum, t.gold) for t in tasks}
    short = {name: sha[:12] for name, sha in c.items()}
    assert out["files"][short["python"]] == (f"widget@{c['root']}", "commit_to_edit", "clean",
                                             {"type": "file_set", "file_set": ["pkg/core.py"]})
    assert out["files"][short["leaky"]][:3] == (f"widget@{c['many']}", "commit_to_edit_leaky", "leaky")
    functions = {k: v[3]["definitions"] for k, v in out["functions"].items()}
    assert functions == {
        short["side"]: [["pkg/server.go", "Serve", 3, 5]],
        short["leaky"]: [["pkg/core.py", "save", 7, 8]],
        short["go"]: [["pkg/server.go", "handle", 7, 9]],
        short["python"]: [["pkg/core.py", "parse_config", 1, 3]]}
    summary = atomic.read_json(tmp_path / "files.json")
    # "Serve on every address ..." names Go's Serve, as a message's first word can
    # the candidates hold every gold file: the gold is drawn from the language's non-test files
    assert (summary["format"], summary["tasks"], summary["gold"]) == (
        "history", 4, {"candidates": "language", "tasks_outside_candidates": 0, "files_outside_candidates": 0,
                       "leaky": 2, "leaky_share": 0.5, "leaky_names": {
            history.instance_id("acme/widget", c["side"]): ["Serve"],
            history.instance_id("acme/widget", c["leaky"]): ["core.py", "save"]}})
    assert summary["dropped_by_reason"] == {
        "bot author": 1, "dependency bump": 1, "formatting only": 1, "merge": 1, "no source file modified": 1,
        "only adds or deletes files": 1, "release": 1, "revert": 1, "root commit": 1, "short message": 1,
        "too many files": 1}
    # SweRank's subset at the file level: each of the four edits a function, so all of them stay
    kept = localize_tasks.run(
        file=mirror / "acme+widget@history.bundle", repository=tmp_path / "repo", store=tmp_path / "store",
        corpus="widget", repo="acme/widget", level="files", out=tmp_path / "sub.jsonl", qrels=tmp_path / "sub.qrels",
        summary=tmp_path / "sub.json", tasks="functions", options={"max_files": 1})
    assert {t.task_id[-12:] for t in kept} == set(out["functions"])
    assert atomic.read_json(tmp_path / "sub.json")["gold"]["tasks"] == "functions"


def test_a_config_resolves_a_history_dataset_to_its_parents(made, tmp_path):
    repo, c = made
    mirror = make_mirror(repo, tmp_path)
    cfg = {"git_mirrors": [str(mirror)], "cache_dir": str(tmp_path / "cache"),
           "repositories": {"widget": {"git": URL}},
           "datasets": {"h": {"format": "history", "repository": "widget", "level": "functions",
                              "history": {"max_files": 1}, "tasks": "functions"}},
           "arms": {"baseline": {}}}
    for _ in range(2):  # the second from the cache
        m = config.from_dict(cfg)
        assert m.corpora["widget"].conf["commits"] == sorted({c["root"], c["python"], c["many"], c["leaky"]})
        assert m.corpora["widget"].conf["history"] is True
        assert m.corpora["widget"].conf["candidates"] == "language" == m.datasets["h"].conf["candidates"]
        ds = m.datasets["h"]
        assert (ds.corpus, ds.file, ds.conf["repository"], ds.conf["history"]["max_files"], ds.conf["tasks"]) == (
            "widget", "results/datasets/h.jsonl", "acme/widget", 1, "functions")
        assert ds.written  # its rows are the ones rule localize_tasks writes
    assert len(list((tmp_path / "cache" / "history").iterdir())) == 1
    bad = {**cfg, "datasets": {"h": {"format": "history", "repository": "nope"}}}
    with pytest.raises(CrmatrixError, match=r"datasets.h.repository: 'nope' is not an entry of repositories:"):
        config.from_dict(bad)
    other = {**cfg, "corpora": {"c": {"path": str(tmp_path)}},
             "datasets": {"d": {"format": "codelens", "file": "d.json", "corpus": "c", "history": {"sample": 3}}}}
    with pytest.raises(CrmatrixError, match=r"datasets.d.history: only a history dataset \(format: history\) has it"):
        config.from_dict(other)
    with pytest.raises(CrmatrixError, match=r"datasets.h: 'repository' is a required property"):
        config.from_dict({**cfg, "datasets": {"h": {"format": "history"}}})


def test_histories_of_one_language_pool_in_the_matrix(made, tmp_path):
    """Two histories of one language's repositories pool their queries in the matrix's benchmark
    section (crmatrix.analysis.matrix.rollups.pooled_benchmarks); a repository of no declared
    language pools nowhere."""
    repo, _ = made
    mirror = make_mirror(repo, tmp_path)
    cfg = {"git_mirrors": [str(mirror)], "repositories": {"widget": {"git": URL, "language": "python"}},
           "datasets": {"h1": {"format": "history", "repository": "widget"},
                        "h2": {"format": "history", "repository": "widget", "history": {"max_files": 1}}},
           "arms": {"baseline": {}}}
    m = config.from_dict(cfg)
    assert m.datasets["h1"].pooled_as == m.datasets["h2"].pooled_as == "history-python"
    bare = config.from_dict({**cfg, "repositories": {"widget": {"git": URL}}})
    assert bare.datasets["h1"].pooled_as is None


@pytest.mark.slow  # no model: about half a minute
def test_a_command_tool_on_a_history_indexes_each_parent_tree_once_and_answers_every_task(made, tmp_path):
    """An external tool (the fake CLI) on a history dataset, as on SWE-bench's: the workflow hands
    it each parent commit's tree, it indexes each distinct tree once, and its run answers every
    task at its parent, with no failure."""
    import yaml
    from conftest import snakemake
    from test_systems import INDEXED

    repo, _ = made
    mirror = make_mirror(repo, tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    cfg = {"git_mirrors": [str(mirror)],
           "repositories": {"widget": {"git": URL, "language": "python", "include": ["**/*.py"]}},
           "datasets": {"h": {"format": "history", "repository": "widget", "history": {"min_words": 3}}},
           "systems": {"fake": {"type": "command", "options": INDEXED}}, "arms": {"baseline": {}}}
    (work / "config.yaml").write_text(yaml.safe_dump(cfg))
    snakemake(work, "--configfile", str(work / "config.yaml"), "--cores", "2")
    tasks = [json.loads(line) for line in (work / "results/datasets/h.jsonl").read_text().splitlines()]
    parents = sorted({t["corpus"].split("@")[1] for t in tasks})
    assert tasks and len(parents) == len(tasks)  # each task at its own parent here
    listing, = (work / "results/index/widget/fake").glob("*/crmatrix-index.json")
    doc = json.loads(listing.read_text())
    # the store's commits (every parent the rules keep before localization, which drops the
    # tasks with no Python source changed), each in the tree of its candidate files
    stored = config.from_dict(cfg).corpora["widget"].conf["commits"]
    assert sorted(c for t in doc["trees"].values() for c in t["commits"]) == sorted(stored)
    assert set(parents) < set(stored)
    assert doc["built"] == len(doc["trees"]) and doc["reused"] == 0
    search = json.loads((work / "results/runs/h/fake/baseline.json").read_text())["methods"]["search"]
    assert sorted(q["task_id"] for q in search["queries"]) == sorted(t["task_id"] for t in tasks)
    assert not any(search["failures"].values()) and search["metrics"]["n"] == len(tasks)


def test_a_history_resolves_to_the_same_plan_wherever_its_bundle_lies(made, tmp_path):
    """The mirrors are resolution's input: the same bundle under two directories gives the same
    corpus, dataset and job inputs and parameters; no job reads the bundle by its path (rule
    fetch_repository finds it in the mirrors, and the rows come from the store's history)."""
    from crmatrix.config.plan import Plan

    repo, _ = made
    mirror_a = make_mirror(repo, tmp_path)
    mirror_b = tmp_path / "elsewhere" / "mirror"
    mirror_b.mkdir(parents=True)
    (mirror_b / "acme+widget@history.bundle").write_bytes((mirror_a / "acme+widget@history.bundle").read_bytes())
    cfg = {"repositories": {"widget": {"git": URL}}, "arms": {"baseline": {}},
           "datasets": {"h": {"format": "history", "repository": "widget", "history": {"max_files": 1}}}}
    a, b = (config.from_dict(cfg, machine_mirrors=[str(m)]) for m in (mirror_a, mirror_b))
    assert a.corpora == b.corpora and a.datasets == b.datasets
    plan_a, plan_b = Plan(a), Plan(b)
    assert plan_a.corpus_params("widget") == plan_b.corpus_params("widget")
    assert plan_a.localize_inputs("h") == plan_b.localize_inputs("h") == {
        "repository": "results/repos/widget", "store": "results/symbols/widget"}
    assert plan_a.dataset_sha256("h") is None  # its runs hash the tasks the workflow wrote
    assert plan_a.cell("h", "builtin", "baseline").inputs["dataset_file"] == "results/datasets/h.jsonl"
    assert not any(str(m) in repr(plan_a.cell("h", "builtin", "baseline")) for m in (mirror_a, mirror_b))


def test_a_history_dataset_ranks_its_language_files_without_tests_or_all(made, tmp_path):
    repo, _ = made
    mirror = make_mirror(repo, tmp_path)
    h = {"format": "history", "repository": "widget", "history": {"max_files": 1}}
    cfg = {"git_mirrors": [str(mirror)], "repositories": {"widget": {"git": URL}}, "arms": {"baseline": {}}}
    m = config.from_dict({**cfg, "datasets": {"h": {**h, "candidates": "all"}}})
    assert m.corpora["widget@all"].conf["candidates"] == "all" == m.datasets["h"].conf["candidates"]
    with pytest.raises(CrmatrixError) as e:
        config.from_dict({**cfg, "datasets": {"h": {**h, "candidates": "agentless"}}})
    assert str(e.value) == ("config: datasets.h.candidates: 'agentless': a history dataset ranks its language's "
                            "source files without tests (language, the default: its gold is drawn from them) or all "
                            "of them (all); agentless is a Python benchmark's rule")
    both = config.from_dict({**cfg, "datasets": {"h": h, "h2": {**h, "candidates": "all"}}})
    assert {n: c.conf["candidates"] for n, c in both.corpora.items()} == {"widget": "language", "widget@all": "all"}
    other = {**cfg, "corpora": {"c": {"path": str(tmp_path)}},
             "datasets": {"d": {"format": "codelens", "file": "d.json", "corpus": "c", "candidates": "language"}}}
    with pytest.raises(CrmatrixError) as e:
        config.from_dict(other)
    assert str(e.value) == ("config: datasets.d.candidates: only a swe-bench or history dataset chooses its candidate "
                            "files (format codelens ranks its corpus's)")


def test_a_history_is_not_read_at_one_commit(tmp_path):
    from crmatrix.datasets.registry import load_all

    with pytest.raises(CrmatrixError, match=r"a history dataset's tasks are each at their own commit"):
        load_all(tmp_path / "x.bundle", "history", "c", {"files": []}, [])


def test_a_commit_outside_the_history_is_named(made, tmp_path):
    repo, _ = made
    mirror = make_mirror(repo, tmp_path)
    corpus = {"git": URL, "history": True, "commits": ["0" * 40]}
    with pytest.raises(CrmatrixError, match=r"corpora.widget: 1 of its 1 commits are not in the history of"):
        fetch_repository.run("widget", corpus, tmp_path / "repo", [str(mirror)])
    assert not (tmp_path / "repo").exists()


# Every commit the rules keep, with their defaults, from each history bundle of ../shared
# (2026-12-04's bundles): a change of a rule or of a bundle shows here.
SHARED_TASKS = {"BurntSushi+ripgrep": 527, "gin-gonic+gin": 724, "expressjs+express": 1438, "psf+requests": 1263}


@needs_shared
@pytest.mark.parametrize("stem", sorted(SHARED_TASKS))
def test_the_shared_history_bundles_give_their_tasks(stem, tmp_path):
    bundle = gitstore.history_bundle(f"https://github.com/{stem.replace('+', '/')}", [str(SHARED / "corpora")])
    gitstore.fetch_commits([], tmp_path / "git", history=bundle)
    rows, _ = history.derive(tmp_path / "git", stem.replace("+", "/"), Options())
    assert len(rows) == SHARED_TASKS[stem]
    # a history's -U0 hunks apply where they say (patches.relocate, as `git apply --unidiff-zero`),
    # so its function gold is read at the stated lines
    texts = gitstore.git(["--git-dir", tmp_path / "git", "cat-file", "--batch"], "cat-file", "".join(
        f"{r.base_commit}:{d.old_path}\n" for r in rows for d in r.diffs).encode())
    at = 0
    for d in (d for r in rows for d in r.diffs):
        size = int(texts[at:texts.index(b"\n", at)].split()[2])
        start = texts.index(b"\n", at) + 1
        text, at = texts[start:start + size].decode("utf-8", "replace"), start + size + 1
        assert patches.relocate(d, text) == d and patches.relocate(d, text).hunks == d.hunks


def test_the_matrix_gives_the_leaky_share_and_each_strata_figures():
    from crmatrix.analysis.matrix.markdown import _benchmarks_md
    from crmatrix.results.cell import Scored, Stratum
    from crmatrix.results.matrix import BenchmarkEntry, Dropped

    def scored(x):
        return {"acc@5": Scored(mean=x, ci_low=x - 0.1, ci_high=x + 0.1)}

    entry = BenchmarkEntry(
        dataset="history-gin", system="builtin", method="hybrid", format="history", metrics=("acc@5",),
        arms={"baseline": scored(0.5)},
        strata={"baseline": {"clean": Stratum(n=3, scores=scored(0.4)), "leaky": Stratum(n=1, scores=scored(0.8))}},
        dropped=Dropped(tasks=4, dropped=2, by_reason={"merge": 2},
                        gold={"leaky": 1, "leaky_share": 0.25, "leaky_names": {"t": ["gin.go"]}}))
    lines = _benchmarks_md((entry,), (), ("baseline",))
    assert "4 tasks; 2 rows or citations dropped: 2 merge; 1 leaky tasks (25%: the message names a gold file or " \
           "function)" in lines
    ruled = replace(entry, dropped=replace(entry.dropped, gold={
        "candidates": "language", "tasks_outside_candidates": 0, "files_outside_candidates": 0,
        **entry.dropped.gold}))
    assert "4 tasks; 2 rows or citations dropped: 2 merge; candidate files: language; 0 tasks with 0 gold files " \
           "outside them, kept as misses; 1 leaky tasks (25%: the message names a gold file or function)" in \
           _benchmarks_md((ruled,), (), ("baseline",))
    assert "| clean | 3 | 0.400 [0.30, 0.50] |" in lines and "| leaky | 1 | 0.800 [0.70, 0.90] |" in lines
