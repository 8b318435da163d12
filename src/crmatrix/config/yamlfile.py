"""A config file read as YAML: its errors name the file, line and column."""

from __future__ import annotations

from pathlib import Path

import yaml

from crmatrix import CrmatrixError


def read_yaml(path: str | Path) -> dict:
    """The config file's contents; a YAML error names the file, line and column."""
    path = Path(path)
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise CrmatrixError(f"{path}: cannot read config: {e.strerror}") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f": line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        what = " ".join(x for x in (getattr(e, "context", None), getattr(e, "problem", None)) if x) or str(e)
        raise CrmatrixError(f"{path}{where}: not valid YAML: {what}") from None
