"""The matrix config, read into one typed, immutable `Matrix` in three steps:

- `yamlfile.read_yaml` — the file, as YAML;
- `schema.apply` — checked against the JSON-Schema, its defaults filled in;
- `resolve.resolve` — made explicit: sweeps become arms, derived views corpora, each arm's
  variables read once, each system's type resolved;
- `check.check` — what the Matrix must satisfy beyond the schema (pins, names, files, references).

`plan.Plan` is what a Matrix means for the DAG. `load` and `from_dict` (`loading`) run the three
steps. They are found when asked for: a stage that reads its typed entries (`entries`,
`settings`) runs none of the loading, and its code hash (`crmatrix.codehash`, which
follows import statements) holds none of it.
"""

from __future__ import annotations

import importlib

_LOADING = ("from_dict", "load", "clamp_warnings")


def __getattr__(name: str):
    if name in _LOADING:
        return getattr(importlib.import_module("crmatrix.config.loading"), name)
    raise AttributeError(f"module 'crmatrix.config' has no attribute {name!r}")
