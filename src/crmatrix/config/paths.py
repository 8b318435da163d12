"""Where the workflow writes each kind of file: one template per kind, under a root (the
workflow's `results/`). The rules' outputs are these templates with their fields left as
wildcards (workflow/rules/common.smk's `PATHS`), and `Plan` and `Targets` format the same
templates with a job's values, so a path is written once.

A job's logs and benchmark records (`logs/...`) are no results: each rule names its own.
"""

from __future__ import annotations

import string

ROOT = "results"

TEMPLATES: dict[str, str] = {
    # corpora and what is read of them
    "tree": "{root}/corpora/{corpus}/tree",
    "manifest": "{root}/corpora/{corpus}/manifest.json",
    "symbols": "{root}/symbols/{corpus}.jsonl",
    "graph": "{root}/graph/{corpus}.json",
    # a repository corpus of many commits: its commits, and its store of their symbols
    "repository": "{root}/repos/{corpus}",
    "store": "{root}/symbols/{corpus}",
    "store_stats": "{root}/symbols/{corpus}.cache.json",
    # models, systems' environments, indexes
    "model": "{root}/models/{model}",
    "venv": "{root}/systems/{system}/{install_key}/venv",
    "index": "{root}/index/{corpus}/{system}/{index_key}",
    "tree_index": "{root}/tree-index/{corpus}/{system}/{index_key}",
    "home": "{root}/home/{system}",
    # datasets
    "tasks": "{root}/datasets/{dataset}.jsonl",
    "summary": "{root}/datasets/{dataset}.summary.json",
    "qrels": "{root}/trec/{dataset}.qrels",
    "grep": "{root}/tokenbench/{dataset}.json",
    "audit": "{root}/audit/{dataset}.{ext}",
    "queries": "{root}/queries/{dataset}/{model}",
    # one evaluation, and what is made of it
    "run": "{root}/runs/{dataset}/{system}/{arm}.json",
    "trec": "{root}/trec/{dataset}/{system}/{arm}",
    "tracking": "{root}/tracking/{dataset}/{system}/{arm}.jsonl",
    "sent": "{root}/tracking/{dataset}/{system}/{arm}.sent.json",
    "cell": "{root}/cells/{dataset}/{system}/{arm}.json",
    "times": "{root}/times/{dataset}/{system}/{arm}.json",
    "callgraph": "{root}/callgraph/{dataset}/{system}.json",
    # the aggregates (`ext`: json, md; txt for the gate)
    "matrix": "{root}/matrix/phase-matrix.{ext}",
    "gate": "{root}/matrix/gate.{ext}",
    "callgraph_table": "{root}/matrix/callgraph.{ext}",
    "slice_matrix": "{root}/matrix/slices/{slice}/phase-matrix.{ext}",
    "slice_callgraph": "{root}/matrix/slices/{slice}/callgraph.{ext}",
    # the charts (`stem`: kind/..., crmatrix.plots.names), their page, the Vega runtime they load
    "chart": "{root}/plots/{stem}.{ext}",
    "gallery": "{root}/plots/index.html",
    "plot_runtime": "{root}/plots/{file}",
}

FIELDS: dict[str, frozenset[str]] = {
    kind: frozenset(f for _, f, _, _ in string.Formatter().parse(t) if f) - {"root"}
    for kind, t in TEMPLATES.items()
}


class _Wildcards(dict):
    """A field not given stays a wildcard, `{name}`, for Snakemake."""

    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


class Layout:
    """The templates under one root."""

    def __init__(self, root: str = ROOT):
        self.root = root

    def _check(self, kind: str, given) -> None:
        if kind not in TEMPLATES:
            raise KeyError(f"no kind of file {kind!r} in crmatrix.config.paths (known: {', '.join(TEMPLATES)})")
        unknown = set(given) - FIELDS[kind]
        if unknown:
            known = ", ".join(sorted(FIELDS[kind]))
            raise KeyError(f"{kind}: no field {', '.join(sorted(unknown))} (its fields: {known})")

    def file(self, kind: str, **fields: str) -> str:
        """The file of `kind` with every field's value."""
        self._check(kind, fields)
        missing = FIELDS[kind] - set(fields)
        if missing:
            raise KeyError(f"{kind}: no value for {', '.join(sorted(missing))}")
        return TEMPLATES[kind].format(root=self.root, **fields)

    def pattern(self, kind: str, **fixed: str) -> str:
        """The template of `kind` with the fields in `fixed` given, the others left as wildcards
        (`{name}`): a rule's output, or a pattern to format many files with."""
        self._check(kind, fixed)
        return TEMPLATES[kind].format_map(_Wildcards(root=self.root, **fixed))
