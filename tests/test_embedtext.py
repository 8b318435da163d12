import pytest

from crmatrix.engine.embedtext import (
    api_calls,
    body_hint,
    embedding_text,
    has_format_specifier,
    is_nl_shaped,
    nl_tokens,
)
from crmatrix.engine.knobs import Knobs
from crmatrix.symbols import Symbol

LOAD_BODY = """\
pub fn load_config(path: &Path) -> Config {
    // read it all at once

    let text = fs::read_to_string(path).unwrap();
    let mut config = Config::default();
    config.merge(parse(&text));
    config
}"""

CACHE_BODY = """\
fn open_cache(dir: &Path) -> Cache {
    // Open the cache directory and load every entry
    /* the index is rebuilt when stale */
    // ok
    let name = "cache index file";
    let id = "x1";
    let p = "dir/name here";
    Cache::load(dir, name)
}"""

STRICT_BODY = """\
fn check(path: &Path) -> Result<()> {
    // TODO fix this later
    // NOTE the cache is warm
    let e = format!("Failed to open {}", path.display());
    let m = format!("%s missing", name);
    let s = "the cache holds parsed entries";
    Ok(())
}"""

API_BODY = """\
fn build() -> Index {
    let mut v = Vec::new();
    let m = HashMap::with_capacity(8);
    v.extend(Vec::new());
    self::helper(std::fmt::Display, crate::x::y);
    let k = std::collections::HashMap::new();
    Index::from(v, m)
}"""


def sym(name="load_config", body=LOAD_BODY, doc="", kind="function", parent="", path="src/app/config.rs",
        signature=None, language="rust"):
    signature = body.split("\n")[0].rstrip(" {") if signature is None else signature
    return Symbol(name, kind, parent, path, language, 1, body.count("\n") + 1, signature, doc, body)


BASE = "function load_config (load config) [app] in config.rs: pub fn load_config(path: &Path) -> Config"


def test_baseline_with_doc_flattens_it_and_cuts_at_the_char_budget():
    s = sym(doc="Load the configuration file.\n\nFalls back to defaults when missing.")
    assert embedding_text(s, Knobs()) == f"{BASE} — Load the configuration file. Falls back to defaults when mis..."


def test_baseline_without_doc_uses_the_first_code_line_of_the_body():
    assert embedding_text(sym(), Knobs()) == f"{BASE} — let text = fs::read_to_string(path).unwrap();"


def test_a_short_doc_is_kept_whole_and_the_body_is_not_used():
    assert embedding_text(sym(doc="Load the config."), Knobs()) == f"{BASE} — Load the config."


def test_more_hint_lines_and_chars():
    k = Knobs(hint_lines=3, hint_chars=180)
    assert embedding_text(sym(), k) == (f"{BASE} — let text = fs::read_to_string(path).unwrap(); · "
                                        "let mut config = Config::default(); · config.merge(parse(&text));")
    assert body_hint(sym(), 3, 60) == "let text = fs::read_to_string(path).unwrap(); · let mut conf..."


@pytest.mark.parametrize("kind,name,parent,path,signature,expected", [
    ("method", "search", "Searcher", "crates/searcher/src/searcher/mod.rs", "pub fn search(&self)",
     "method search (in Searcher) [searcher] in mod.rs: pub fn search(&self)"),
    ("struct", "Config", "", "src/lib.rs", "pub struct Config", "struct Config in lib.rs: pub struct Config"),
    ("function", "main", "", "main.go", "func main()", "function main in main.go: func main()"),
    ("class", "HTTPAdapter", "", "crates/adapters.py", "class HTTPAdapter(BaseAdapter)",
     "class HTTPAdapter (HTTP Adapter) in adapters.py: class HTTPAdapter(BaseAdapter)"),
    ("constant", "MAX", "", "src/x/consts.rs", "", "constant MAX [x] in consts.rs"),
])
def test_header_parts(kind, name, parent, path, signature, expected):
    s = Symbol(name, kind, parent, path, "rust", 1, 1, signature, "", signature)
    assert embedding_text(s, Knobs()) == expected


def test_body_hint_starts_after_the_line_that_opens_the_body():
    py = sym("f", "@cache\ndef f(\n    x,\n) -> int:\n    # why\n    return x + 1\n", signature="def f(x) -> int",
             language="python", path="f.py")
    assert body_hint(py, 1, 60) == "return x + 1"
    assert body_hint(sym("g", "fn g() { 1 }"), 1, 60) == ""  # never opens on a line of its own
    assert body_hint(sym("h", "fn h()\n{\n}\n"), 1, 60) == ""


def test_nl_tokens_from_comments_and_literals():
    assert nl_tokens(CACHE_BODY, "rust", False, False) == [
        "Open the cache directory and load every entry", "the index is rebuilt when stale", "cache index file"]
    s = sym("open_cache", CACHE_BODY, path="src/cache.rs")
    head = ("function open_cache (open cache) in cache.rs: fn open_cache(dir: &Path) -> Cache — "
            "let name = \"cache index file\";")
    assert embedding_text(s, Knobs(nl_tokens=True, hint_chars=200)) == (
        f"{head} · NL: Open the cache directory and load every entry · the index is rebuilt when stale"
        " · cache index file")
    # The NL list shares the hint's char budget.
    assert embedding_text(s, Knobs(nl_tokens=True)) == (
        f"{head} · NL: Open the cache directory and load every entry · the index is...")


@pytest.mark.parametrize("text,shaped", [
    ("skip comments and string literals", True), ("failed to open database", True),
    ("crates/codelens-engine/src", False), ("C:\\Users\\foo", False), ("std::sync::Mutex", False),
    ("detect_client", False), ("ok", False), ("", False), ("1 2 3 4 5", False),
])
def test_is_nl_shaped(text, shaped):
    assert is_nl_shaped(text) is shaped


def test_is_nl_shaped_counts_as_its_definition_says():
    """Its count by bytes (ASCII) agrees with str.isspace and str.isalpha character by character:
    over every ASCII character (\x1c-\x1f are spaces to Python) and non-ASCII letters and spaces."""
    import random

    def defined(s: str) -> bool:
        s = s.strip()
        if len(s) < 4 or " " not in s or "/" in s or "\\" in s or "::" in s:
            return False
        return sum(c.isalpha() for c in s) * 100 // sum(not c.isspace() for c in s) >= 60

    rng = random.Random(7)
    alphabet = [chr(c) for c in range(128)] + ["é", "ß", "\u00a0", "\u2003", "½", "٣", "中"]
    texts = ["abc d\x1c\x1d\x1e\x1f1", "ab 12", "abc 1", "abc 12", "éé é1", "a\x0bb c"]

    def char() -> str:  # letters and spaces often enough to sit near the 60 % line
        r = rng.random()
        return rng.choice("abcXYZ") if r < 0.55 else " " if r < 0.7 else rng.choice(alphabet)

    texts += ["".join(char() for _ in range(rng.randint(4, 12))) for _ in range(20000)]
    got = [is_nl_shaped(t) for t in texts]
    assert got == [defined(t) for t in texts]
    assert 4000 < sum(got) < 16000  # both answers are met often


def test_strict_literals_drop_format_and_error_strings_only():
    loose = nl_tokens(STRICT_BODY, "rust", False, False)
    assert loose == ["TODO fix this later", "NOTE the cache is warm", "Failed to open {}", "%s missing",
                     "the cache holds parsed entries"]
    assert nl_tokens(STRICT_BODY, "rust", True, False) == [
        "TODO fix this later", "NOTE the cache is warm", "the cache holds parsed entries"]


def test_strict_comments_drop_meta_annotations_only():
    assert nl_tokens(STRICT_BODY, "rust", False, True) == [
        "NOTE the cache is warm", "Failed to open {}", "%s missing", "the cache holds parsed entries"]
    body = "fn f() {\n    // fixme: later on\n    // SAFETY: the pointer is valid\n    // WARNING the lock is held\n}"
    assert nl_tokens(body, "rust", False, True) == ["SAFETY: the pointer is valid", "WARNING the lock is held"]


def test_stacked_strict_text():
    s = sym("check", STRICT_BODY, path="src/check.rs")
    k = Knobs(nl_tokens=True, api_calls=True, strict_literals=True, strict_comments=True, hint_chars=120)
    assert embedding_text(s, k) == (
        "function check in check.rs: fn check(path: &Path) -> Result<()> — "
        'let e = format!("Failed to open {}", path.display()); · NL: NOTE the cache is warm'
        " · the cache holds parsed entries")


@pytest.mark.parametrize("text,expected", [
    ("Failed to open {}", True), ("%s missing", True), ("value {0:>8}", True), ("hello {name}", True),
    ("{:?} items", True), ("a {name: foo, id: 1} b", False), ("100 % done", False), ("plain words", False),
])
def test_has_format_specifier(text, expected):
    assert has_format_specifier(text) is expected


def test_api_calls_are_uppercase_type_pairs_in_first_appearance_order():
    assert api_calls(API_BODY) == ["Vec::new", "HashMap::with_capacity", "HashMap::new", "Index::from"]
    assert api_calls("Foo::Bar::baz; Vec::<u8>::new(); _Priv::x; 9Num::y") == ["Foo::Bar", "Num::y"]
    s = sym("build", API_BODY, path="src/index.rs")
    assert embedding_text(s, Knobs(api_calls=True, hint_chars=100)) == (
        "function build in index.rs: fn build() -> Index — let mut v = Vec::new(); · API: Vec::new"
        " · HashMap::with_capacity · HashMap::new · Index::from")


def test_literal_scanner_follows_escapes_across_lines():
    body = 'x = "say \\"hello there\\" now"\ny = """Parse the whole\n    settings file."""\n'
    assert nl_tokens(body, "python", False, False) == ["say hello there now", "Parse the whole\n    settings file."]


def test_hash_lines_are_comments_but_rust_attributes_are_not():
    body = "impl X {\n    #[inline]\n    # the hash comment here\n    #!not a comment either\n}"
    assert nl_tokens(body, "rust", False, False) == ["the hash comment here"]
    assert body_hint(sym("X", body), 1, 60) == ""


def test_error_prefixes_need_their_word_boundary():
    body = 'fn f() {\n    a("Invalidate stale entries now");\n    b("Error:disk is full today");\n}'
    assert nl_tokens(body, "rust", True, False) == ["Invalidate stale entries now"]
