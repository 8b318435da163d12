"""Slices of the matrix: the runs of one dataset, of one corpus or of one arm.

Each slice is a Snakemake target of its own, named by its kind and subject
(`dataset_requests`, `corpus_requests`, `arm_stacked`: a corpus and its dataset often share a
name, so the kind is part of it), and has a phase matrix of its runs alone. An arm is measured
against the baseline arm, so an arm's slice holds the baseline's runs too.
"""

from __future__ import annotations

from crmatrix.corpora import views
from crmatrix.pipeline import experiment
from crmatrix.systems.registry import answers_calls

KINDS = ("dataset", "corpus", "arm")


def slice_name(kind: str, subject: str) -> str:
    return f"{kind}_{subject}"


def slices(cfg: dict) -> dict[str, dict]:
    """Slice name -> {kind, subject, corpora, cells, calls} for a validated config.

    `cells` are the slice's runs of the phase matrix as (dataset, system, arm), in dataset,
    system, then the system's arm order; `calls` its call-graph evaluations as (dataset,
    system); `corpora` the corpora the slice prepares even without a dataset (a corpus's own).
    A corpus's slice also holds the derived datasets scored on its docs-withheld view."""
    systems = sorted(cfg["systems"])
    arms = {s: experiment.system_arms(cfg, cfg["systems"][s]) for s in systems}
    callers = [s for s in systems if answers_calls(cfg["systems"][s])]
    retrieval = experiment.retrieval_datasets(cfg)
    callgraph = experiment.callgraph_datasets(cfg)

    def of_datasets(kind: str, subject: str, datasets: list[str], corpora: list[str]) -> dict:
        return {"kind": kind, "subject": subject, "corpora": corpora,
                "cells": [(d, s, a) for d in datasets if d in retrieval for s in systems for a in arms[s]],
                "calls": [(d, s) for d in datasets if d in callgraph for s in callers]}

    out = {}
    for d in sorted(cfg["datasets"]):
        out[slice_name("dataset", d)] = of_datasets("dataset", d, [d], [])
    for c in sorted(cfg["corpora"]):
        if views.source(cfg["corpora"][c]):
            continue  # a view's datasets are its corpus's (experiment.dataset_source)
        of_corpus = sorted(d for d in cfg["datasets"] if experiment.dataset_source(cfg, d) == c)
        out[slice_name("corpus", c)] = of_datasets("corpus", c, of_corpus, [c])
    baseline = cfg["baseline_arm"]
    for arm in cfg["arms"]:
        compared = [baseline] if arm == baseline else [baseline, arm]
        out[slice_name("arm", arm)] = {
            "kind": "arm", "subject": arm, "corpora": [], "calls": [],
            "cells": [(d, s, a) for d in retrieval for s in systems if arm in arms[s] for a in arms[s]
                      if a in compared]}
    return out
