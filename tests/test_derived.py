"""Derived datasets: queries made from a corpus's own leading docs (crmatrix.datasets.derived),
scored on its docs-withheld view (crmatrix.corpora.views), sampled by directory."""

import json
from collections import Counter
from pathlib import Path

import pytest
from test_cli import crmatrix

from crmatrix import CrmatrixError, atomic
from crmatrix.corpora import views
from crmatrix.corpora.tree import select_files
from crmatrix.datasets import holdout, registry
from crmatrix.engine import bm25, knobs, lexical
from crmatrix.engine.embedtext import embedding_text
from crmatrix.stages import prepare_dataset
from crmatrix.symbols import read_symbols
from crmatrix.symbols.extract import extract_files

PYTHON = {
    "src/pkg/io/reader.py": '''import json


# Pick the mirror that answered fastest, e.g. the local one.
# Ties go to the first.
def choose_mirror(mirrors):
    return min(mirrors, key=lambda m: m.latency)


def load_settings(path, strict=False):
    """Read the settings file and merge it over the defaults.

    Args:
        path: where the file is.
    """
    # fall back to an empty mapping
    with open(path) as f:
        return json.load(f, object_hook=lambda d: {**d, "why": "keep the literal"})


class Session:
    """A :class:`~http.client.HTTPConnection` pool that keeps ``cookies`` between requests."""

    def close_all(self):
        """Close all adapters and the session."""
        self.adapters.clear()

    def helper(self):
        """Helper."""
        return None
''',
    "src/pkg/net/client.py": '''class MemoryStore:
    def get(self, key):
        """Look up an entry by its key in memory."""
        return self.items[key]

    def value(self):
        """Return the value stored under the key."""
        return self.items["value"]


class RemoteStore:
    def get(self, key):
        """Fetch a record over the network by id."""
        return self.http.get(key)

    def value(self):
        """Return the value stored under the key."""
        return self.remote["value"]


def retry(call, attempts=3):
    """Call again after a connection error, waiting longer each time.

    >>> retry(lambda: 1)
    1
    """
    for _ in range(attempts):
        return call()
''',
    "src/pkg/util.py": "def undocumented(x):\n    return x * 2\n",
}
RUST = {
    "crates/glob/src/lib.rs": '''/// Builds a matcher from a glob pattern.
///
/// # Examples
///
/// ```
/// let m = compile("*.rs");
/// ```
pub fn compile(pattern: &str) -> Matcher {
    // an empty pattern matches nothing
    Matcher::default()
}

/** Counts the lines of [`Buffer`] that match, see [the guide](https://example.org/guide). */
pub fn count_matches(buf: &Buffer) -> usize {
    buf.lines().filter(|l| l.hit).count()
}

// Skip the byte order mark at the start of the input.
fn skip_bom(bytes: &[u8]) -> &[u8] {
    bytes
}
''',
    "crates/search/src/searcher.rs": '''/// A searcher that reads **memory maps** when it can.
#[derive(Debug)]
pub struct Searcher {
    mmap: bool,
}

impl Searcher {
    /// Creates a new searcher with default settings.
    pub fn new() -> Searcher {
        Searcher { mmap: false }
    }

    /// Short.
    pub fn run(&self) {}
}

/// How a search reports what it found.
pub trait Sink {
    /// Called with every line that matches the pattern.
    fn matched(&mut self, line: &str) -> bool;
}
''',
}
TYPESCRIPT = {
    "src/scheduler/frame.ts": '''/**
 * Merges two observables into one that emits {@link Notification} values.
 * @param a the first
 */
export function mergeNotifications(a: Observable, b: Observable): Observable {
  return merge(a, b);
}

/** Schedules work on the <code>animation frame</code> queue &amp; flushes it. */
export class FrameScheduler {
  /**
   * Flush every queued action now.
   */
  flush(): void {
    // drain the queue
  }
}
''',
    "src/util/isPromiseLike.ts": '''// Returns true when the value is a thenable, i.e. has a then method.
export function isPromiseLike(value: any): boolean {
  return typeof value?.then === "function";
}

/** Describes how long a subscription stays open. */
export interface Lifetime {
  until: number;
}
''',
}


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def corpus(tmp_path: Path, files: dict[str, str], name: str = "fx") -> tuple[dict, list]:
    """A path corpus as the fetch and symbols stages make it: its manifest and symbols."""
    src = write(tmp_path / "src", files)
    part = select_files(src, tmp_path / "tree", ["**"], [])
    symbols = extract_files(tmp_path / "tree", [f["path"] for f in part["files"] if f["language"]])
    return {"corpus": name, "pin": {"kind": "path", "path": str(src)}, **part}, symbols


def derive(tmp_path: Path, files: dict[str, str]) -> registry.Loaded:
    manifest, symbols = corpus(tmp_path, files)
    return registry.load_all(tmp_path / "symbols.jsonl", "derived", "fx~nodocs", manifest, symbols)


def rows(loaded: registry.Loaded) -> list[tuple]:
    return [(t.task_id, t.query, t.gold["symbol"], t.gold["file_suffix"], t.stratum) for t in loaded.tasks]


def test_python_first_sentences_of_docstrings_and_hash_comments(tmp_path):
    loaded = derive(tmp_path, PYTHON)
    assert rows(loaded) == [
        ("src/pkg/io/reader.py:6:choose_mirror", "Pick the mirror that answered fastest, e.g. the local one",
         "choose_mirror", "src/pkg/io/reader.py", "io"),
        ("src/pkg/io/reader.py:10:load_settings", "Read the settings file and merge it over the defaults",
         "load_settings", "src/pkg/io/reader.py", "io"),
        ("src/pkg/io/reader.py:21:Session", "A HTTPConnection pool that keeps cookies between requests",
         "Session", "src/pkg/io/reader.py", "io"),
        ("src/pkg/net/client.py:21:retry", "Call again after a connection error, waiting longer each time",
         "retry", "src/pkg/net/client.py", "net"),
    ]
    assert {t.corpus for t in loaded.tasks} == {"fx~nodocs"} and {t.query_type for t in loaded.tasks} == {
        "natural_language"}
    assert loaded.tasks[0].gold == {"type": "symbol", "symbol": "choose_mirror", "file_suffix": "src/pkg/io/reader.py"}
    # drops by reason, in file order, each with what decided it
    assert [(d["row"], d["reason"]) for d in loaded.dropped] == [
        ("src/pkg/io/reader.py:24:close_all", "names the gold"),
        ("src/pkg/io/reader.py:28:helper", "too short"),
        ("src/pkg/net/client.py:2:get", "ambiguous gold"),
        ("src/pkg/net/client.py:6:value", "repeated query"),
        ("src/pkg/net/client.py:12:get", "ambiguous gold"),
        ("src/pkg/net/client.py:16:value", "repeated query"),
    ]
    assert loaded.dropped[3]["detail"] == ("'Return the value stored under the key' also documents "
                                           "src/pkg/net/client.py:16:value")
    assert loaded.summary("derived")["dropped_by_reason"] == {"ambiguous gold": 2, "names the gold": 1,
                                                              "repeated query": 2, "too short": 1}


def test_rust_first_sentences_of_doc_comments(tmp_path):
    loaded = derive(tmp_path, RUST)
    assert rows(loaded) == [
        ("crates/glob/src/lib.rs:8:compile", "Builds a matcher from a glob pattern", "compile",
         "crates/glob/src/lib.rs", "glob/src"),
        ("crates/glob/src/lib.rs:14:count_matches", "Counts the lines of Buffer that match, see the guide",
         "count_matches", "crates/glob/src/lib.rs", "glob/src"),
        ("crates/glob/src/lib.rs:19:skip_bom", "Skip the byte order mark at the start of the input", "skip_bom",
         "crates/glob/src/lib.rs", "glob/src"),
        # `matches` is not `matched`: words are compared whole, as the audit compares them
        ("crates/search/src/searcher.rs:18:Sink", "How a search reports what it found", "Sink",
         "crates/search/src/searcher.rs", "search/src"),
        ("crates/search/src/searcher.rs:20:matched", "Called with every line that matches the pattern", "matched",
         "crates/search/src/searcher.rs", "search/src"),
    ]
    assert Counter(d["reason"] for d in loaded.dropped) == {"names the gold": 2, "too short": 1}


def test_typescript_first_sentences_of_jsdoc_and_line_comments(tmp_path):
    loaded = derive(tmp_path, TYPESCRIPT)
    assert rows(loaded) == [
        ("src/scheduler/frame.ts:5:mergeNotifications",
         "Merges two observables into one that emits Notification values", "mergeNotifications",
         "src/scheduler/frame.ts", "scheduler"),
        ("src/scheduler/frame.ts:10:FrameScheduler", "Schedules work on the animation frame queue & flushes it",
         "FrameScheduler", "src/scheduler/frame.ts", "scheduler"),
        ("src/util/isPromiseLike.ts:2:isPromiseLike",
         "Returns true when the value is a thenable, i.e. has a then method", "isPromiseLike",
         "src/util/isPromiseLike.ts", "util"),
        ("src/util/isPromiseLike.ts:7:Lifetime", "Describes how long a subscription stays open", "Lifetime",
         "src/util/isPromiseLike.ts", "util"),
    ]
    assert [(d["row"], d["reason"]) for d in loaded.dropped] == [("src/scheduler/frame.ts:14:flush", "names the gold")]


@pytest.mark.parametrize(("path", "source", "expected"), [
    # Go's convention opens with the name: the query is what follows it
    ("x/reader.go", "package x\n\n// NewReader returns a buffered reader over r.\nfunc NewReader(r io.Reader) *Reader {"
                    "\n\treturn nil\n}\n", ("NewReader", "returns a buffered reader over r")),
    ("x/Gson.java", "/**\n * Serializes Java objects into their {@link JsonElement} form.\n * <p>More.\n */\n"
                    "public final class Gson {}\n", ("Gson", "Serializes Java objects into their JsonElement form")),
    ("x/app.js", "/**\n * Dispatch a req, res pair into the application.\n * @private\n */\n\n"
                 "app.handle = function handle(req, res) {\n  return 1;\n};\n",
     ("handle", "Dispatch a req, res pair into the application")),
])
def test_go_java_and_javascript_docs_make_queries_too(tmp_path, path, source, expected):
    assert [(t.gold["symbol"], t.query) for t in derive(tmp_path, {path: source}).tasks] == [expected]


def test_a_corpus_without_docs_or_without_parsed_source_is_one_line(tmp_path):
    with pytest.raises(CrmatrixError) as e:
        derive(tmp_path / "a", {"lib/m.py": "def f():\n    return 1\n\n\nclass C:\n    pass\n"})
    assert str(e.value) == ("corpus 'fx': no leading docs to derive queries from (none of its 2 function, method, "
                            "class, struct, enum, interface, trait symbols has one)")
    with pytest.raises(CrmatrixError) as e:
        derive(tmp_path / "b", {"main.c": "/* Add two. */\nint add(int a, int b) { return a; }\n", "README.md": "x"})
    assert str(e.value) == ("corpus 'fx' holds no file in a language the symbol extractor parses (go, java, "
                            "javascript, python, rust, tsx, typescript); its files: {'other': 2}")


def test_the_view_blanks_every_leading_doc_and_keeps_lines_symbols_and_bodies(tmp_path):
    manifest, symbols = corpus(tmp_path, {**PYTHON, **RUST, **TYPESCRIPT})
    view = views.withhold_docs("fx~nodocs", tmp_path / "tree", manifest, tmp_path / "view", tmp_path / "view.json")
    reader = (tmp_path / "view/src/pkg/io/reader.py").read_text()
    lines = reader.splitlines()
    assert lines[3:6] == [" " * 60, " " * 23, "def choose_mirror(mirrors):"]
    # a docstring keeps its quotes (a body that was only its docstring still parses) and its line breaks
    assert lines[10:15] == ['    """' + " " * 54, "", " " * 9, " " * 32, '    """']
    assert lines[24] == '        """' + " " * 35 + '"""'
    # body comments and literals stay
    assert lines[15] == "    # fall back to an empty mapping" and '"keep the literal"' in lines[17]
    for rel, text in {**PYTHON, **RUST, **TYPESCRIPT}.items():
        blanked = (tmp_path / "view" / rel).read_text()
        assert blanked.count("\n") == text.count("\n") and len(blanked) <= len(text)
    assert "// drain the queue" in (tmp_path / "view/src/scheduler/frame.ts").read_text()
    seen = extract_files(tmp_path / "view", [f["path"] for f in manifest["files"]])

    def shape(s):
        return s.path, s.name, s.kind, s.parent, s.start_line, s.end_line, s.signature

    assert [shape(s) for s in seen] == [shape(s) for s in symbols]
    assert {s.doc for s in seen} == {""} and len({s.doc for s in symbols}) > 20
    # the view's manifest: the corpus's pin, where it comes from, and a content hash of its own
    assert view["pin"] == manifest["pin"] and view["corpus"] == "fx~nodocs"
    assert view["view"] == {"kind": "nodocs", "of": "fx", "content_hash": manifest["content_hash"]}
    assert view["content_hash"] != manifest["content_hash"] and atomic.read_json(tmp_path / "view.json") == view
    assert [f["path"] for f in view["files"]] == [f["path"] for f in manifest["files"]]


def index_texts(symbols) -> list[str]:
    """Everything the builtin indexes of the symbols, under every arm's knobs: embedding texts, BM25
    documents, and the fields the lexical and sparse rankers read."""
    arms = [{}, {"CODELENS_EMBED_HINT_INCLUDE_COMMENTS": "1", "CODELENS_EMBED_HINT_INCLUDE_API_CALLS": "1",
                 "CODELENS_EMBED_HINT_CHARS": "512", "CODELENS_EMBED_HINT_LINES": "10"},
            {"CODELENS_EMBED_HINT_AUTO": "1", "CODELENS_EMBED_HINT_AUTO_LANG": "rust"}]
    texts = [embedding_text(s, knobs.resolve(env, None)) for env in arms for s in symbols]
    texts += [bm25.document(s) for s in symbols]
    texts += [" ".join((d.name, d.signature, d.qualname, d.path)) for d in map(lexical.LexicalDoc.of, symbols)]
    return [" ".join(t.split()).casefold() for t in texts]


def test_no_derived_query_occurs_in_any_index_text_or_file_of_its_view(tmp_path):
    files = {**PYTHON, **RUST, **TYPESCRIPT}
    manifest, symbols = corpus(tmp_path, files)
    queries = [t.query.casefold() for t in registry.load(tmp_path, "derived", "fx~nodocs", manifest, symbols)]
    assert len(queries) == 13
    views.withhold_docs("fx~nodocs", tmp_path / "tree", manifest, tmp_path / "view", tmp_path / "view.json")
    blanked = extract_files(tmp_path / "view", [f["path"] for f in manifest["files"]])
    on_files = [" ".join((tmp_path / "view" / rel).read_text().split()).casefold() for rel in files]
    assert not [q for q in queries for text in index_texts(blanked) + on_files if q in text]
    # the same check on the corpus itself finds them: the queries that keep their doc's wording
    # (no markup taken out) are in its index texts
    found = {q for q in queries for text in index_texts(symbols) if q in text}
    assert len(found) == 9
    # what no doc touched embeds as before (the view's index takes its vectors from the cache); a
    # class whose body held its methods' docstrings read them as 2b literals, and no longer does
    undocumented = [s.name for s in symbols if not s.doc]
    for env, same in (({}, undocumented), ({"CODELENS_EMBED_HINT_INCLUDE_COMMENTS": "1"}, ["undocumented"])):
        arm = knobs.resolve(env, None)
        pairs = zip(symbols, blanked, strict=True)
        assert [s.name for s, v in pairs if embedding_text(s, arm) == embedding_text(v, arm)] == same
    assert undocumented == ["MemoryStore", "RemoteStore", "undocumented"]


def tasks_in(tmp_path: Path, sizes: dict[str, int]) -> list:
    """Derived tasks over directories of documented functions: `dir -> how many`."""
    files = {f"src/{d}/m{i}.py": f'def f{i}():\n    """Parse the input number {i} into a list of {d} tokens."""\n'
             for d, n in sizes.items() for i in range(n)}
    return derive(tmp_path, {k.replace("src/./", "src/"): v for k, v in files.items()}).tasks


def test_the_sample_is_seeded_stratified_by_directory_and_the_same_every_time(tmp_path):
    tasks = tasks_in(tmp_path, {"a": 6, "b": 3, ".": 1})
    assert Counter(t.stratum for t in tasks) == {"a": 6, "b": 3, ".": 1}
    first = holdout.sample(tasks, 5, seed=0)
    assert holdout.sample(tasks, 5, seed=0) == first  # identical on every run
    # 5 seats of 10 by largest remainder: a 3; b 1.5 and the top 0.5 tie on remainder, the larger stratum wins
    assert Counter(t.stratum for t in first) == {"a": 3, "b": 2}
    other = holdout.sample(tasks, 5, seed=1)
    assert Counter(t.stratum for t in other) == {"a": 3, "b": 2} and other != first
    assert [t.task_id for t in first] == sorted(t.task_id for t in first)  # the loader's order
    assert Counter(t.stratum for t in holdout.sample(tasks, 8)) == {"a": 5, "b": 2, ".": 1}
    assert holdout.sample(tasks, 300) == tasks


def test_prepare_dataset_samples_then_writes_tasks_qrels_and_the_drops(tmp_path):
    manifest, symbols = corpus(tmp_path, PYTHON)
    atomic.write_json(tmp_path / "manifest.json", manifest)
    atomic.write_jsonl(tmp_path / "symbols.jsonl", [s.to_dict() for s in symbols])
    out = tmp_path / "out"
    tasks = prepare_dataset.run(tmp_path / "symbols.jsonl", "derived", "fx~nodocs", tmp_path / "manifest.json",
                                tmp_path / "symbols.jsonl", out / "d.jsonl", out / "d.qrels", out / "d.summary.json",
                                sample={"max_queries": 3, "seed": 0})
    assert len(tasks) == 3 and Counter(t.stratum for t in tasks) == {"io": 2, "net": 1}
    summary = json.loads((out / "d.summary.json").read_text())
    assert summary["sample"] == {"max_queries": 3, "seed": 0, "candidates": 4, "sampled": 3}
    assert (summary["format"], summary["tasks"], summary["dropped"]) == ("derived", 3, 6)
    qrels = (out / "d.qrels").read_text().splitlines()
    assert sorted(line.split()[2] for line in qrels) == sorted(t.task_id for t in tasks)  # the gold is one symbol
    assert read_symbols(tmp_path / "symbols.jsonl") == symbols


def test_the_cli_shows_and_audits_a_derived_dataset_of_a_directory(tmp_path):
    src = write(tmp_path / "proj", PYTHON)
    show = crmatrix("dataset", "show", "derived", "--corpus", str(src), "--max-queries", "3")
    assert show.returncode == 0, show.stderr
    shown = [json.loads(line) for line in show.stdout.splitlines()]
    assert Counter(r["stratum"] for r in shown) == {"io": 2, "net": 1}
    assert show.stderr.splitlines()[0] == (f"{src}: format derived: 4 tasks, 6 dropped, 2 ambiguous gold, 1 names the "
                                           "gold, 2 repeated query, 1 too short; sampled 3; split all: 3 tasks")
    audit = crmatrix("dataset", "audit", "--format", "derived", "--corpus", str(src), "--json")
    assert audit.returncode == 0, audit.stderr
    result = json.loads(audit.stdout)
    assert (result["dataset"], result["n"], result["name_overlap"]["all_words"]) == ("proj-derived", 4, 0)
    bad = crmatrix("dataset", "show", "derived", str(src), "--corpus", str(src))
    assert bad.returncode == 2
    assert bad.stderr.strip() == ("crmatrix: dataset show: format derived reads no FILE (its queries come from the "
                                  "leading docs of --corpus)")
    # a one-off run would score the queries on the corpus that holds them
    run = crmatrix("run", "--corpus", str(src), "--dataset", "-", "--format", "derived")
    assert run.returncode == 2 and "docs-withheld view, which the workflow makes" in run.stderr

