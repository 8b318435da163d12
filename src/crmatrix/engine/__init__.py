"""The builtin reference engine: the CodeLens ranking mechanisms over extracted symbols."""

from crmatrix.engine.engine import METHODS, Engine

__all__ = ["METHODS", "Engine"]
