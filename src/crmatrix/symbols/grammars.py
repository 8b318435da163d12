"""The tree-sitter grammars of the supported languages, from the official per-language wheels
(bundled, so nothing is fetched at run time), and one parser per language and process."""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import version
from typing import Any

import tree_sitter
import tree_sitter_go
import tree_sitter_java
import tree_sitter_javascript
import tree_sitter_python
import tree_sitter_rust
import tree_sitter_typescript
from tree_sitter import Language, Parser

_GRAMMARS: dict[str, Callable[[], Any]] = {
    "python": tree_sitter_python.language,
    "rust": tree_sitter_rust.language,
    "typescript": tree_sitter_typescript.language_typescript,
    "tsx": tree_sitter_typescript.language_tsx,
    "javascript": tree_sitter_javascript.language,
    "go": tree_sitter_go.language,
    "java": tree_sitter_java.language,
}

_PARSERS: dict[str, Parser] = {}


def parser(language: str) -> Parser:
    """The tree-sitter parser of one supported language (made once per process)."""
    made = _PARSERS.get(language)
    if made is None:
        if language not in _GRAMMARS:
            raise ValueError(f"unsupported language: {language!r}")
        made = Parser(Language(_GRAMMARS[language]()))
        _PARSERS[language] = made
    return made


def versions() -> dict[str, str]:
    """The installed version of tree-sitter and of each grammar wheel (distribution names are
    the modules' with `-`): what the parse trees depend on besides this package's code."""
    modules = {tree_sitter.__name__, *(g.__module__.split(".")[0] for g in _GRAMMARS.values())}
    return {name: version(name.replace("_", "-")) for name in sorted(modules)}
