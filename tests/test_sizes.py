"""The house's size rule: every module of the library and the benchmarks holds at most 400
lines and every function (a method, a nested one) at most 80, from its `def` to its last line."""

import ast

from conftest import ROOT

MODULE_LINES, FUNCTION_LINES = 400, 80
CHECKED = ("src", "benchmarks")


def oversized(source: str, where: str) -> list[str]:
    """What breaks the rule in one module's `source`, each as `where`[:line] and its size."""
    out = []
    lines = len(source.splitlines())
    if lines > MODULE_LINES:
        out.append(f"{where}: {lines} lines")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            size = node.end_lineno - node.lineno + 1
            if size > FUNCTION_LINES:
                out.append(f"{where}:{node.lineno}: {node.name}, {size} lines")
    return sorted(out)


def test_the_check_counts_a_function_from_its_def_to_its_last_line():
    body = "".join(f"    x{i} = {i}\n" for i in range(FUNCTION_LINES - 1))
    assert oversized(f"def f():\n{body}", "m.py") == []
    method = "".join("    " + line + "\n" for line in body.splitlines())
    nested = f"class C:\n    def g(self):\n{method}        y = 1\n"  # 80 lines of body: 81 with its def
    assert oversized(nested, "m.py") == ["m.py:2: g, 81 lines"]
    assert oversized("x = 1\n" * MODULE_LINES, "m.py") == []
    assert oversized("x = 1\n" * (MODULE_LINES + 1), "m.py") == [f"m.py: {MODULE_LINES + 1} lines"]


def test_every_module_and_function_of_the_library_and_benchmarks_is_within_its_size():
    found = []
    for part in CHECKED:
        for path in sorted((ROOT / part).rglob("*.py")):
            found += oversized(path.read_text(encoding="utf-8"), path.relative_to(ROOT).as_posix())
    assert not found, "over the house's size (modules <= 400 lines, functions <= 80):\n" + "\n".join(found)
