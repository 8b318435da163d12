"""Sweeps: an arm grid declared as the cartesian product of knob values, expanded into arms.

A sweep is a name, the variables every cell shares (`env`) and one or two axes, each a
variable with its values. Its cells are the product of the axes' values, the first axis
varying slowest, and each becomes an arm named `<sweep>-<axis><value>[-<axis><value>]`
(e.g. `sparse-t40-m20`): the axis's `name` (default: the variable's last word, lower-cased)
followed by the value in its one spelling (`knobs.canonical`, so "040" names `t40`). Names
hold letters, digits, `.`, `_` and `-` only, so they are safe as Snakemake wildcards, paths
and shell words. Once expanded, a cell is an arm like any declared one: its own jobs, the
indexes it shares by its index-time knobs, a column of the matrix.

Two axes at most: a grid one can draw (`crmatrix.plots.sweep`); a third knob is one sweep
per value of it.
"""

from __future__ import annotations

import itertools
import re

from crmatrix import CrmatrixError
from crmatrix.engine import knobs
from crmatrix.engine.knobs import MODEL_VAR

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_PART = re.compile(r"[A-Za-z0-9._-]+")


def axis_name(axis: dict) -> str:
    return axis.get("name") or axis["var"].rsplit("_", 1)[-1].lower()


def _value(where: str, var: str, raw: str) -> str:
    """`raw` in the one spelling jobs get (a bad knob value is an error here, naming the axis)."""
    try:
        return knobs.canonical({var: raw})[var]
    except CrmatrixError as e:
        raise CrmatrixError(f"{where}: {e}") from None


def _axes(where: str, sweep: dict, models: dict) -> list[tuple[str, str, list[str]]]:
    """(variable, name, values in one spelling) per axis, checked."""
    out, names = [], {}
    for i, axis in enumerate(sweep["axes"]):
        at = f"{where}.axes.{i}"
        var, name = axis["var"], axis_name(axis)
        if var in sweep["env"]:
            raise CrmatrixError(f"{at}.var: {var} is also set in {where}.env (an axis varies it; env holds the "
                                "variables every cell shares)")
        if any(var == v for v, _, _ in out):
            raise CrmatrixError(f"{at}.var: {var} is already axis {[v for v, _, _ in out].index(var)}")
        if not _PART.fullmatch(name):
            raise CrmatrixError(f"{at}.name: {name!r} cannot be part of an arm name (letters, digits, ., _ and - "
                                "only)")
        if name in names:
            raise CrmatrixError(f"{at}: name {name!r} is also axis {names[name]}'s; give one of them another "
                                "`name`")
        names[name] = i
        values, seen = [], {}
        for j, raw in enumerate(axis["values"]):
            value = _value(f"{at}.values.{j}", var, raw)
            if var == MODEL_VAR and value not in models:
                raise CrmatrixError(f"{at}.values.{j}: {value!r} is not one of the models ({', '.join(models)})")
            if not _PART.fullmatch(value):
                raise CrmatrixError(f"{at}.values.{j}: {raw!r} cannot be part of an arm name (letters, digits, ., _ "
                                    "and - only)")
            if value in seen:
                raise CrmatrixError(f"{at}.values.{j}: {raw!r} is the value of values.{seen[value]} spelled "
                                    "another way")
            seen[value] = j
            values.append(value)
        out.append((var, name, values))
    return out


def _grid(sweep: str, conf: dict, models: dict) -> tuple[list[tuple[str, str, list[str]]], list[tuple[str, tuple]]]:
    """The sweep's checked axes, and its cells in grid order as (arm name, value per axis)."""
    where = f"sweeps.{sweep}"
    if not _NAME.fullmatch(sweep):
        raise CrmatrixError(f"{where}: {sweep!r} cannot start an arm name (a letter or digit, then letters, "
                            "digits, ., _ and - only)")
    try:
        knobs.resolve(conf["env"], None)
    except CrmatrixError as e:
        raise CrmatrixError(f"{where}.env: {e}") from None
    axes = _axes(where, conf, models)
    cells = [("-".join([sweep, *(f"{name}{v}" for (_, name, _), v in zip(axes, values, strict=True))]), values)
             for values in itertools.product(*(vs for _, _, vs in axes))]
    return axes, cells


def expand(cfg: dict) -> dict[str, dict[str, str]]:
    """Every sweep's cells as arms (cell name -> env), in sweep then grid order. A cell whose
    name is a declared arm's or another sweep's cell's is an error naming both."""
    out: dict[str, dict[str, str]] = {}
    owner: dict[str, str] = {}
    for sweep, conf in cfg["sweeps"].items():
        axes, cells = _grid(sweep, conf, cfg["models"])
        for arm, values in cells:
            if arm in cfg["arms"]:
                raise CrmatrixError(f"sweeps.{sweep}: its cell {arm!r} has the name of the arm arms.{arm}; rename "
                                    "the sweep or the arm")
            if arm in owner:
                raise CrmatrixError(f"sweeps.{sweep}: its cell {arm!r} is also a cell of sweeps.{owner[arm]}; "
                                    "rename one of the sweeps")
            owner[arm] = sweep
            out[arm] = {**conf["env"], **{var: v for (var, _, _), v in zip(axes, values, strict=True)}}
    return out


def grids(cfg: dict) -> dict[str, dict]:
    """What a sweep's chart draws: its axes (variable, name, values) and each cell's arm with
    its value on each axis, in grid order."""
    out = {}
    for sweep, conf in cfg["sweeps"].items():
        axes, cells = _grid(sweep, conf, cfg["models"])
        out[sweep] = {"axes": [{"var": var, "name": name, "values": values} for var, name, values in axes],
                      "cells": [{"arm": arm, "values": list(values)} for arm, values in cells]}
    return out
