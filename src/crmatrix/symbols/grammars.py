"""The tree-sitter grammars of the supported languages, from the official per-language wheels
(bundled, so nothing is fetched at run time), and one parser per language and process."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Parser

# language -> (grammar wheel's module, its function giving the language); imported with the first
# parser a process asks for, so that what only names a language loads no parser
_GRAMMARS: dict[str, tuple[str, str]] = {
    "python": ("tree_sitter_python", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
    "javascript": ("tree_sitter_javascript", "language"),
    "go": ("tree_sitter_go", "language"),
    "java": ("tree_sitter_java", "language"),
}

_PARSERS: dict[str, Parser] = {}


def parser(language: str) -> Parser:
    """The tree-sitter parser of one supported language (made once per process)."""
    made = _PARSERS.get(language)
    if made is None:
        if language not in _GRAMMARS:
            raise ValueError(f"unsupported language: {language!r}")
        from tree_sitter import Language, Parser

        module, function = _GRAMMARS[language]
        made = Parser(Language(getattr(importlib.import_module(module), function)()))
        _PARSERS[language] = made
    return made


def versions() -> dict[str, str]:
    """The installed version of tree-sitter and of each grammar wheel (distribution names are
    the modules' with `-`): what the parse trees depend on besides this package's code."""
    from importlib.metadata import version

    modules = {"tree_sitter", *(module for module, _ in _GRAMMARS.values())}
    return {name: version(name.replace("_", "-")) for name in sorted(modules)}
