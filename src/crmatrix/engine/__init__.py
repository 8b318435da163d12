"""The builtin reference engine: the CodeLens ranking mechanisms over extracted symbols.

`Engine` is loaded when first named, so that what only asks for the knobs or the methods
(planning, `crmatrix validate`) loads no engine library."""

from crmatrix.engine.methods import INDEX_METHODS, METHODS

__all__ = ["INDEX_METHODS", "METHODS", "Engine"]


def __getattr__(name: str):
    if name == "Engine":
        from crmatrix.engine.engine import Engine

        return Engine
    raise AttributeError(f"module 'crmatrix.engine' has no attribute {name!r}")
