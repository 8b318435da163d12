"""A config file read: JSON or YAML, a key given twice refused, errors naming the file, line and
column; an empty file or another kind of value than an object at the top level said so."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from crmatrix import CrmatrixError
from crmatrix.jsontypes import json_type


class _StrictLoader(yaml.SafeLoader):
    """PyYAML's safe loader, but a key given twice in one mapping is an error: the plain loader
    keeps the last silently, so a second `arms:` or a repeated arm would drop the first. A key
    merged in (`<<: *anchor`) and set again beside it is an override, not a repeat."""

    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            first: dict = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    earlier = first.setdefault(key, key_node)
                except TypeError:  # an unhashable key: the base loader names it
                    continue
                if earlier is not key_node:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"key {key!r} is given twice in one mapping (first on line "
                        f"{earlier.start_mark.line + 1}); YAML would keep only the last", key_node.start_mark)
        return super().construct_mapping(node, deep=deep)


def _json_config(text: str, path: Path) -> dict | None:
    """A config written as a JSON object (Snakemake tries JSON first too, and JSON's tabs are
    no YAML), a repeated key refused; None for text that is not JSON."""
    def pairs(items: list) -> dict:
        keys = [k for k, _ in items]
        repeated = next((k for i, k in enumerate(keys) if k in keys[:i]), None)
        if repeated is not None:
            raise CrmatrixError(f"{path}: not valid JSON config: key {repeated!r} is given twice in one object; "
                                "JSON would keep only the last")
        return dict(items)

    try:
        data = json.loads(text, object_pairs_hook=pairs)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def read_yaml(path: str | Path) -> dict:
    """The config file's contents, an object, read by the strict loader (no repeated key); a
    YAML error names the file, line and column, and an empty file or another kind of value at
    the top level says so."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
        data = _json_config(text, path)
        if data is None:
            data = yaml.load(text, Loader=_StrictLoader)
    except OSError as e:
        raise CrmatrixError(f"{path}: cannot read config: {e.strerror}") from None
    except UnicodeDecodeError as e:
        raise CrmatrixError(f"{path}: cannot read config: not UTF-8 text ({e.reason} at byte {e.start})") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f": line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        what = " ".join(x for x in (getattr(e, "context", None), getattr(e, "problem", None)) if x) or str(e)
        if "'\\t'" in what:  # PyYAML's repr of a tab
            what += " (YAML indents with spaces, never tabs)"
        raise CrmatrixError(f"{path}{where}: not valid YAML: {what}") from None
    if data is None:
        raise CrmatrixError(f"{path}: the file is empty (or only comments): expected a matrix config, "
                            "`key: value` lines such as corpora:, datasets:, arms:, systems:")
    if not isinstance(data, dict):
        raise CrmatrixError(f"{path}: expected `key: value` lines at the top level (corpora:, datasets:, ...), "
                            f"got {json_type(data)}")
    return data
