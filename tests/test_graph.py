"""The reference graph: calls, inheritance, overrides and imports on a small hand-made corpus."""

import json

import numpy as np

from crmatrix import graph
from crmatrix.corpora.languages import language_for
from crmatrix.graph.extract import build
from crmatrix.symbols.extract import extract_source

FILES = {
    "pkg/__init__.py": "from .base import Base\n",
    "pkg/base.py": (
        "class Base:\n"
        "    def run(self):\n"
        "        return self.step()\n"
        "\n"
        "    def step(self):\n"
        "        return helper()\n"
        "\n"
        "\n"
        "def helper():\n"
        "    return len([])\n"
        "\n"
        "\n"
        "class Pool:\n"
        "    def close(self):\n"
        "        pass\n"
    ),
    "pkg/impl.py": (
        "from pkg.base import Base, helper\n"
        "from . import util\n"
        "\n"
        "\n"
        "class Impl(Base):\n"
        "    def step(self):\n"
        "        util.shout()\n"
        "        return helper()\n"
        "\n"
        "    def shutdown(self):\n"
        "        self.run()\n"
        "        value.close()\n"
    ),
    "pkg/util.py": "def shout():\n    return print('!')\n\n\ndef close():\n    pass\n\n\n"
                   "class Other:\n    def close(self):\n        pass\n",
    "web/a.ts": "import { b } from './b';\nexport class A extends B { go() { this.stop(); b(); } stop() {} }\n",
    "web/b.ts": "export function b() { return new A(); }\nexport class B { stop() {} }\n",
}


def corpus(tmp_path):
    for rel, text in FILES.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    syms = sorted((s for p, t in FILES.items() for s in extract_source(t.encode(), p, language_for(p))),
                  key=lambda s: (s.path, s.start_line, s.name))
    return syms, build(tmp_path, sorted(FILES), syms)


def test_calls_resolve_by_qualifier_then_file_then_corpus(tmp_path):
    _, g = corpus(tmp_path)
    assert g.calls == [
        ["pkg/base.py:2:run", "pkg/base.py:5:step"],        # self.step(): Base's own method
        ["pkg/base.py:5:step", "pkg/base.py:9:helper"],      # same file
        ["pkg/impl.py:10:shutdown", "pkg/base.py:2:run"],    # self.run(): not in Impl, the one `run` method
        ["pkg/impl.py:6:step", "pkg/base.py:9:helper"],      # the one `helper` in the corpus
        ["pkg/impl.py:6:step", "pkg/util.py:1:shout"],       # util.shout(): a function of module util
        ["web/a.ts:2:go", "web/a.ts:2:stop"],                # this.stop(): A's own (go is on stop's line)
        ["web/a.ts:2:go", "web/b.ts:1:b"],
        ["web/b.ts:1:b", "web/a.ts:2:A"],                    # new A()
    ]
    # len/print are builtins; value.close() could be Pool.close or Other.close: counted, not guessed
    assert g.counts["calls"] == {"found": 11, "qualified": 2, "same_file": 1, "unique": 5, "ambiguous": 1,
                                 "unresolved": 2}


def test_inheritance_overrides_and_imports(tmp_path):
    _, g = corpus(tmp_path)
    assert g.inherits == [["pkg/impl.py:5:Impl", "pkg/base.py:1:Base"], ["web/a.ts:2:A", "web/b.ts:2:B"]]
    assert g.overrides == [["pkg/impl.py:6:step", "pkg/base.py:5:step"], ["web/a.ts:2:stop", "web/b.ts:2:stop"]]
    assert g.imports == [["pkg/__init__.py", "pkg/base.py"], ["pkg/impl.py", "pkg/base.py"],
                         ["pkg/impl.py", "pkg/util.py"], ["web/a.ts", "web/b.ts"]]
    assert g.counts["imports"] == {"found": 4, "resolved": 4, "unresolved": 0}


def test_the_stored_graph_reads_back_and_answers_neighbours_and_calls(tmp_path):
    syms, g = corpus(tmp_path)
    out = tmp_path / "graph.json"
    graph.write(g, out)
    again = graph.read(out, syms)
    assert again == g and json.loads(out.read_text())["symbols"] == len(syms)
    near = again.neighbours(syms)
    name = {i: f"{s.path}:{s.name}" for i, s in enumerate(syms)}
    step = next(i for i, s in enumerate(syms) if s.path == "pkg/impl.py" and s.name == "step")
    assert sorted(name[int(i)] for i in near[step]) == ["pkg/base.py:helper", "pkg/base.py:step", "pkg/util.py:shout"]
    assert all(isinstance(n, np.ndarray) for n in near)
    assert again.call_edges("callees", "step", "impl.py") == [("helper", "pkg/base.py"), ("shout", "pkg/util.py")]
    assert again.call_edges("callers", "helper") == [("step", "pkg/base.py"), ("step", "pkg/impl.py")]


def test_a_graph_of_other_symbols_is_refused(tmp_path):
    import pytest

    from crmatrix import CrmatrixError

    syms, g = corpus(tmp_path)
    graph.write(g, tmp_path / "graph.json")
    with pytest.raises(CrmatrixError, match=r"graph.json: built from other symbols than the ones given; rebuild it"):
        graph.read(tmp_path / "graph.json", syms[1:])
