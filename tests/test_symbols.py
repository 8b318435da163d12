"""Tests for crmatrix.symbols: tree-sitter symbol extraction per language."""

import textwrap

import pytest

from crmatrix.corpora.languages import language_for
from crmatrix.symbols import Symbol
from crmatrix.symbols.extract import extract_files, extract_source


def extract(code: str, language: str, path: str = "f") -> list[Symbol]:
    return extract_source(textwrap.dedent(code).lstrip("\n").encode(), path, language)


def rows(symbols: list[Symbol]) -> list[tuple[str, str, str, int, int]]:
    return [(s.name, s.kind, s.parent, s.start_line, s.end_line) for s in symbols]


def by_name(symbols: list[Symbol], name: str) -> Symbol:
    (found,) = [s for s in symbols if s.name == name]
    return found


PYTHON = '''
import functools

# Helper comment
# second line
def get(url, params=None, **kwargs):
    return request("get", url, params=params, **kwargs)


class Session(SessionRequestsMixin):
    """A Requests session.

    Provides persistence.
        Indented detail.
    """

    @functools.cache
    @other
    def request(self, method, url):  # trailing note
        def inner():
            pass
        return inner

    class Inner:
        def deep(self) -> int:
            return 1
'''


def test_python_symbols():
    symbols = extract(PYTHON, "python", "requests/sessions.py")
    assert rows(symbols) == [
        ("get", "function", "", 5, 6),
        ("Session", "class", "", 9, 25),
        ("request", "method", "Session", 16, 21),
        ("inner", "function", "request", 19, 20),
        ("Inner", "class", "Session", 23, 25),
        ("deep", "method", "Inner", 24, 25),
    ]
    get = by_name(symbols, "get")
    assert get.signature == "def get(url, params=None, **kwargs)"
    assert get.doc == "Helper comment\nsecond line"
    assert get.path == "requests/sessions.py" and get.language == "python"
    session = by_name(symbols, "Session")
    assert session.signature == "class Session(SessionRequestsMixin)"
    assert session.doc == "A Requests session.\n\nProvides persistence.\n    Indented detail."
    assert by_name(symbols, "deep").signature == "def deep(self) -> int"
    assert by_name(symbols, "deep").qualname == "Inner.deep"


def test_python_decorated_method_includes_decorators():
    request = by_name(extract(PYTHON, "python"), "request")
    assert request.body.startswith("@functools.cache\n    @other\n    def request(")
    assert request.body.endswith("return inner")
    assert request.signature == "def request(self, method, url)"
    assert request.doc == ""


RUST = """
use std::fmt;

/// A glob matcher.
/// Second line.
#[derive(Clone, Debug)]
pub struct Matcher<T> {
    inner: T,
}

struct Unit;

/** Block doc
 * more */
pub trait Build {
    fn build(&self, pattern: &str) -> Result<Matcher, Error>;
    fn name(&self) -> &str { "x" }
}

impl<T> fmt::Display for Matcher<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Ok(())
    }
}

impl crate::glob::Glob {
    pub fn build(&self, pattern: &str) -> Result<Matcher, Error> {
        fn helper() {}
        helper()
    }
}

pub enum Kind { A, B }
type Alias = Vec<u8>;
pub const MAX: usize = 3;
static NAME: &str = "n";
mod tests;
macro_rules! debug { ($($t:tt)*) => {} }
"""


def test_rust_symbols():
    symbols = extract(RUST, "rust")
    assert rows(symbols) == [
        ("Matcher", "struct", "", 6, 8),
        ("Unit", "struct", "", 10, 10),
        ("Build", "trait", "", 14, 17),
        ("build", "method", "Build", 15, 15),
        ("name", "method", "Build", 16, 16),
        ("fmt", "method", "Matcher", 20, 22),
        ("build", "method", "Glob", 26, 29),
        ("helper", "function", "build", 27, 27),
        ("Kind", "enum", "", 32, 32),
        ("Alias", "type", "", 33, 33),
        ("MAX", "constant", "", 34, 34),
        ("NAME", "constant", "", 35, 35),
        ("tests", "module", "", 36, 36),
        ("debug", "macro", "", 37, 37),
    ]
    matcher = by_name(symbols, "Matcher")
    assert matcher.signature == "pub struct Matcher<T>"
    assert matcher.doc == "A glob matcher.\nSecond line."
    assert by_name(symbols, "Unit").signature == "struct Unit;"
    assert by_name(symbols, "Build").doc == "Block doc\nmore"
    glob_build = [s for s in symbols if s.qualname == "Glob.build"][0]
    assert glob_build.signature == "pub fn build(&self, pattern: &str) -> Result<Matcher, Error>"
    trait_build = [s for s in symbols if s.qualname == "Build.build"][0]
    assert trait_build.signature == "fn build(&self, pattern: &str) -> Result<Matcher, Error>;"
    assert by_name(symbols, "debug").signature == "macro_rules! debug"


GO = """
package gin

// Context is the most important part of gin.
// It carries request state.
type Context struct {
	index int8
}

type (
	// HandlerFunc handles a request.
	HandlerFunc func(*Context)
	Router      interface {
		Handle(string)
	}
)

// JSON serializes obj.
func (c *Context) JSON(code int, obj any) {
	c.Render(code, obj)
}

func (l List[T]) Len() int { return 0 }

func New() *Context {
	return &Context{}
}
"""


def test_go_symbols():
    symbols = extract(GO, "go")
    assert rows(symbols) == [
        ("Context", "struct", "", 5, 7),
        ("HandlerFunc", "type", "", 11, 11),
        ("Router", "interface", "", 12, 14),
        ("JSON", "method", "Context", 18, 20),
        ("Len", "method", "List", 22, 22),
        ("New", "function", "", 24, 26),
    ]
    context = by_name(symbols, "Context")
    assert context.signature == "type Context struct"
    assert context.doc == "Context is the most important part of gin.\nIt carries request state."
    assert context.body.startswith("type Context struct {")
    json = by_name(symbols, "JSON")
    assert json.signature == "func (c *Context) JSON(code int, obj any)"
    assert json.doc == "JSON serializes obj."
    assert by_name(symbols, "HandlerFunc").signature == "HandlerFunc func(*Context)"
    assert by_name(symbols, "HandlerFunc").doc == "HandlerFunc handles a request."
    assert by_name(symbols, "Router").signature == "Router interface"


JAVA = """
package com.google.gson;

/**
 * The main class.
 * <p>Second paragraph.
 */
public final class Gson {
  /** Builds one. */
  public Gson() {
    this(1);
  }

  @Override
  public String toString() {
    return "";
  }

  static class FutureTypeAdapter<T> extends TypeAdapter<T> {
    FutureTypeAdapter() {}
  }

  interface Listener { void changed(int x); }
  enum Mode { A, B; void run() {} }
  record Pair(int a, int b) {}
}
"""


def test_java_symbols():
    symbols = extract(JAVA, "java")
    assert rows(symbols) == [
        ("Gson", "class", "", 7, 25),
        ("Gson", "method", "Gson", 9, 11),
        ("toString", "method", "Gson", 13, 16),
        ("FutureTypeAdapter", "class", "Gson", 18, 20),
        ("FutureTypeAdapter", "method", "FutureTypeAdapter", 19, 19),
        ("Listener", "interface", "Gson", 22, 22),
        ("changed", "method", "Listener", 22, 22),
        ("Mode", "enum", "Gson", 23, 23),
        ("run", "method", "Mode", 23, 23),
        ("Pair", "class", "Gson", 24, 24),
    ]
    gson = symbols[0]
    assert gson.signature == "public final class Gson"
    assert gson.doc == "The main class.\n<p>Second paragraph."
    constructor = symbols[1]
    assert constructor.signature == "public Gson()"
    assert constructor.doc == "Builds one."
    assert by_name(symbols, "toString").signature == "@Override public String toString()"
    assert by_name(symbols, "changed").signature == "void changed(int x);"


TYPESCRIPT = """
import { operate } from '../util/lift';

/**
 * Applies a given `project` function.
 */
export function map<T, R>(project: (value: T, index: number) => R): OperatorFunction<T, R> {
  return operate((source, subscriber) => {
    function hidden() {}
  });
}

export class Subscriber<T> extends Subscription {
  // Next value.
  next(value: T): void {}
  get closed(): boolean {
    return this.isStopped;
  }
}

export abstract class Base {
  abstract run(): void;
}

export interface Observer<T> {
  next: (value: T) => void;
  error(err: any): void;
}

export type Cons<T> = Observer<T> | null;

export enum Kind { A, B }

export const f = (x: number) => x + 1;

export default class Default {
  static create() {
    const helper = function () {};
  }
}
"""


def test_typescript_symbols():
    symbols = extract(TYPESCRIPT, "typescript")
    assert rows(symbols) == [
        ("map", "function", "", 6, 10),
        ("Subscriber", "class", "", 12, 18),
        ("next", "method", "Subscriber", 14, 14),
        ("closed", "method", "Subscriber", 15, 17),
        ("Base", "class", "", 20, 22),
        ("run", "method", "Base", 21, 21),
        ("Observer", "interface", "", 24, 27),
        ("error", "method", "Observer", 26, 26),
        ("Cons", "type", "", 29, 29),
        ("Kind", "enum", "", 31, 31),
        ("f", "function", "", 33, 33),
        ("Default", "class", "", 35, 39),
        ("create", "method", "Default", 36, 38),
        ("helper", "function", "create", 37, 37),
    ]
    map_ = by_name(symbols, "map")
    assert map_.signature == (
        "export function map<T, R>(project: (value: T, index: number) => R): OperatorFunction<T, R>"
    )
    assert map_.doc == "Applies a given `project` function."
    assert map_.body.startswith("export function map")
    assert by_name(symbols, "next").doc == "Next value."
    assert by_name(symbols, "closed").signature == "get closed(): boolean"
    assert by_name(symbols, "error").signature == "error(err: any): void"
    assert by_name(symbols, "Cons").signature == "export type Cons<T> = Observer<T> | null;"
    assert by_name(symbols, "f").signature == "export const f = (x: number) =>"
    assert by_name(symbols, "f").body == "export const f = (x: number) => x + 1;"
    assert by_name(symbols, "Subscriber").signature == "export class Subscriber<T> extends Subscription"


def test_tsx_parses():
    code = """
    export function Button({ label }: Props): JSX.Element {
      return <button onClick={() => go()}>{label}</button>;
    }
    const Row = () => <tr><td /></tr>;
    """
    assert rows(extract(code, "tsx")) == [
        ("Button", "function", "", 1, 3),
        ("Row", "function", "", 4, 4),
    ]


JAVASCRIPT = """
'use strict';

/**
 * Dispatch a req, res pair.
 * @private
 */

app.handle = function handle(req, res, callback) {
  function next() {}
};

Foo.prototype.bar = function () {};
exports.baz = function (a, b) {};
module.exports = function createApplication() {};
module.exports = function () {};
res.contentType = res.type = function contentType(type) {};
describe('suite', () => {
  function insideCallback() {}
});
const matchers = {
  toHaveLength(received, expected) {},
};
var gen = function* () {};
mixin(class extends Base {
  method() {}
});
"""


def test_javascript_symbols():
    symbols = extract(JAVASCRIPT, "javascript")
    assert rows(symbols) == [
        ("handle", "method", "app", 8, 10),
        ("next", "function", "handle", 9, 9),
        ("bar", "method", "Foo", 12, 12),
        ("baz", "function", "exports", 13, 13),
        ("createApplication", "function", "", 14, 14),
        ("type", "method", "res", 16, 16),
        ("toHaveLength", "method", "matchers", 21, 21),
        ("gen", "function", "", 23, 23),
        ("method", "method", "", 25, 25),
    ]
    handle = by_name(symbols, "handle")
    assert handle.signature == "app.handle = function handle(req, res, callback)"
    assert handle.doc == "Dispatch a req, res pair.\n@private"
    assert by_name(symbols, "bar").signature == "Foo.prototype.bar = function ()"
    assert by_name(symbols, "baz").body == "exports.baz = function (a, b) {};"
    assert by_name(symbols, "type").signature == (
        "res.contentType = res.type = function contentType(type)"
    )


@pytest.mark.parametrize(
    ("path", "language"),
    [
        ("src/requests/api.py", "python"),
        ("typing/stub.pyi", "python"),
        ("crates/core/lib.rs", "rust"),
        ("src/index.ts", "typescript"),
        ("types/x.d.ts", "typescript"),
        ("a.mts", "typescript"),
        ("a.cts", "typescript"),
        ("ui/App.tsx", "tsx"),
        ("lib/express.js", "javascript"),
        ("a.mjs", "javascript"),
        ("a.cjs", "javascript"),
        ("a.jsx", "javascript"),
        ("gin.go", "go"),
        ("Gson.java", "java"),
        ("README.md", None),
        ("Makefile", None),
    ],
)
def test_language_for(path, language):
    assert language_for(path) == language


def test_output_is_sorted():
    code = """
    class B:
        def z(self): pass
        def a(self): pass
    def a(): pass
    """
    symbols = extract(code, "python")
    keys = [(s.path, s.start_line, s.end_line, s.name, s.kind) for s in symbols]
    assert keys == sorted(keys)
    assert [s.qualname for s in symbols] == ["B", "B.z", "B.a", "a"]


def test_extract_files_skips_unsupported(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "b.py").write_text("def b():\n    pass\n")
    (tmp_path / "a.go").write_text("package a\n\nfunc A() {}\n")
    (tmp_path / "README.md").write_text("# def not_code():\n")
    symbols = extract_files(tmp_path, ["pkg/b.py", "README.md", "a.go"])
    assert [(s.path, s.name, s.language) for s in symbols] == [
        ("a.go", "A", "go"),
        ("pkg/b.py", "b", "python"),
    ]


def test_dict_round_trip():
    for symbol in extract(TYPESCRIPT, "typescript"):
        data = symbol.to_dict()
        assert "qualname" not in data
        assert Symbol.from_dict(data) == symbol


def test_non_utf8_source_still_yields_symbols():
    source = b'def f():\n    return "\xff\xfe"\n\n\ndef g():\n    pass\n'
    symbols = extract_source(source, "bad.py", "python")
    assert rows(symbols) == [("f", "function", "", 1, 2), ("g", "function", "", 5, 6)]
    assert "\ufffd" in symbols[0].body


def test_syntax_errors_yield_what_parses():
    source = b"def broken(:\n    pass\n\ndef fine():\n    pass\n"
    assert "fine" in [s.name for s in extract_source(source, "e.py", "python")]


def test_signature_is_truncated():
    params = ", ".join(f"p{i}" for i in range(200))
    (symbol,) = extract_source(f"def f({params}):\n    pass\n".encode(), "l.py", "python")
    assert len(symbol.signature) == 300


PYTHON_HOLDERS = '''\
if a:
    def in_if(): pass
elif b:
    def in_elif(): pass
else:
    def in_else(): pass
for x in y:
    def in_for(): pass
else:
    def in_for_else(): pass
while c:
    def in_while(): pass
try:
    def in_try(): pass
except E:
    def in_except(): pass
else:
    def in_try_else(): pass
finally:
    def in_finally(): pass
try:
    pass
except* G:
    def in_except_group(): pass
with m:
    async def in_with(): pass
match v:
    case 1:
        class InCase:
            @property
            def decorated(self): return [x for x in (lambda: 1,)]
print(1
class Recovered:
    def under_an_error(self): pass
'''


def test_python_definitions_under_every_statement_that_holds_a_block_and_under_error_recovery():
    """The walk skips expressions and simple statements (no definition lies there), not a
    block's statements, nor a subtree error recovery made (`print(1` above: an ERROR node)."""
    from crmatrix.symbols import definitions
    from crmatrix.symbols.grammars import parser

    names = [s.name for s in extract_source(PYTHON_HOLDERS.encode(), "h.py", "python")]
    assert names == ["in_if", "in_elif", "in_else", "in_for", "in_for_else", "in_while", "in_try", "in_except",
                     "in_try_else", "in_finally", "in_except_group", "in_with", "InCase", "decorated",
                     "under_an_error"]

    def everywhere(node, scope):  # the walk into every subtree
        found, inner = definitions.CLASSIFIERS["python"](node, scope)
        return (found, inner) if found is not None else (None, scope)

    root = parser("python").parse(PYTHON_HOLDERS.encode()).root_node
    assert root.has_error and sorted(d.name for d in definitions.walk(root, everywhere)) == sorted(names)
