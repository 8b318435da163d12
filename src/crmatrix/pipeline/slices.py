"""Slices of the matrix: the runs of one dataset, of one corpus or of one arm.

Each slice is a Snakemake target of its own, named by its kind and subject
(`dataset_requests`, `corpus_requests`, `arm_stacked`: a corpus and its dataset often share a
name, so the kind is part of it), and has a phase matrix of its runs alone. An arm is measured
against the baseline arm, so an arm's slice holds the baseline's runs too.
"""

from __future__ import annotations

from crmatrix.config.matrix import Matrix
from crmatrix.config.paths import ROOT, Layout

KINDS = ("dataset", "corpus", "arm")


def slice_name(kind: str, subject: str) -> str:
    return f"{kind}_{subject}"


def slices(m: Matrix) -> dict[str, dict]:
    """Slice name -> {kind, subject, corpora, cells, calls} for a matrix.

    `cells` are the slice's runs of the phase matrix as (dataset, system, arm), in dataset,
    system, then the system's arm order; `calls` its call-graph evaluations as (dataset,
    system); `corpora` the corpora the slice prepares even without a dataset (a corpus's own).
    A corpus's slice also holds the derived datasets scored on its docs-withheld view."""
    systems = sorted(m.systems)
    arms = {s: m.systems[s].arms for s in systems}
    callers = [s for s in systems if m.systems[s].cls.ANSWERS_CALLS]
    retrieval, callgraph = m.retrieval_datasets, m.callgraph_datasets

    def of_datasets(kind: str, subject: str, datasets: list[str], corpora: list[str]) -> dict:
        return {"kind": kind, "subject": subject, "corpora": corpora,
                "cells": [(d, s, a) for d in datasets if d in retrieval for s in systems for a in arms[s]],
                "calls": [(d, s) for d in datasets if d in callgraph for s in callers]}

    out = {}
    for d in sorted(m.datasets):
        out[slice_name("dataset", d)] = of_datasets("dataset", d, [d], [])
    for c in sorted(m.corpora):
        if m.corpora[c].kind == "view":
            continue  # a view's datasets are its corpus's (Dataset.source)
        of_corpus = sorted(d for d, ds in m.datasets.items() if ds.source == c)
        out[slice_name("corpus", c)] = of_datasets("corpus", c, of_corpus, [c])
    baseline = m.baseline_arm
    for arm in m.arms:
        compared = [baseline] if arm == baseline else [baseline, arm]
        out[slice_name("arm", arm)] = {
            "kind": "arm", "subject": arm, "corpora": [], "calls": [],
            "cells": [(d, s, a) for d in retrieval for s in systems if arm in arms[s] for a in arms[s]
                      if a in compared]}
    return out


def arms(m: Matrix, sl: dict) -> list[str]:
    """A slice's arms in config order (its matrix's columns)."""
    present = {a for _, _, a in sl["cells"]}
    return [a for a in m.arms if a in present]


def datasets(sl: dict) -> list[str]:
    return sorted({d for d, _, _ in sl["cells"]})


def retrieval_datasets(m: Matrix, sl: dict) -> list[str]:
    """A slice's datasets of the phase matrix (each with its dataset stage's summary)."""
    return [d for d in datasets(sl) if d in m.retrieval_datasets]


def targets(name: str, sl: dict, root: str = ROOT) -> list[str]:
    """A slice's outputs, its runs named themselves (as the matrix's are)."""
    at, out = Layout(root).file, []
    for c in sl["corpora"]:
        out += [at("manifest", corpus=c), at("symbols", corpus=c)]
    if sl["cells"]:
        out += [*(at("run", dataset=d, system=s, arm=a) for d, s, a in sl["cells"]),
                at("slice_matrix", slice=name, ext="json"), at("slice_matrix", slice=name, ext="md")]
    if sl["calls"]:
        out += [at("slice_callgraph", slice=name, ext="json"), at("slice_callgraph", slice=name, ext="md")]
    return out
