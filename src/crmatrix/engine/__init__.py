"""The builtin reference engine: the CodeLens ranking mechanisms over extracted symbols."""

from crmatrix.engine.engine import INDEX_METHODS, METHODS, Engine

__all__ = ["INDEX_METHODS", "METHODS", "Engine"]
