"""Which charts a matrix gets, by name (`kind/...`, no suffix), and what each kind shows.

Kept free of Altair so that the workflow can declare the outputs without loading it.
"""

from __future__ import annotations

CAPTIONS = {
    "arms": "The row's headline metric per arm (bar) with its 95 % bootstrap interval over queries (whisker); "
            "the dashed line is the baseline; ≡ marks an arm whose per-query results equal another arm's.",
    "transitions": "Each query's first relevant rank under the baseline (x) and under the arm (y), one panel per "
                   "distinct arm; points below the diagonal improved; `miss`: not in the ranking depth; a larger "
                   "point is more queries.",
    "heatmap": "Relative Δ of the headline metric against the baseline for every dataset (row) and arm (column); "
               "* the Holm-corrected paired test is significant (p < 0.05); ≡ the arm's per-query results equal "
               "that arm's.",
    "forest": "Each dataset's paired Δ of the headline metric against the baseline with its 95 % interval "
              "(Δ ± 1.96 SE), grouped by language; diamonds pool them by random effects (DerSimonian–Laird), "
              "per language and over all datasets, with I² for the spread beyond chance.",
    "sweep": "A sweep's grid per dataset: each cell's headline metric (text), coloured by its Δ against the "
             "baseline, the axes being the sweep's knobs; the dataset's best cell is outlined.",
    "latency": "Search latency of one query: the median (point) with a whisker to the 95th percentile, over the "
               "queries of every dataset, per arm (row) and method (colour), one panel per system.",
    "quality-latency": "The headline metric (macro mean over datasets) against search latency p50, one point per "
                       "system, method and arm; up and to the left is better.",
}
CROSS = ["heatmap", "latency", "quality-latency"]


def stems(datasets: list[str], arms: dict[str, list[str]], baseline: str,
          sweeps: dict[str, list[str]] | None = None) -> list[str]:
    """Every chart of a matrix over these datasets and systems, each system with its arms;
    `sweeps` (sweep -> its cells' arms) adds one grid per sweep and system taking part in it."""
    rows = [f"{kind}/{s}/{d}" for kind in ("arms", "transitions") for s in arms for d in datasets]
    forests = [f"forest/{s}/{a}" for s, system_arms in arms.items() for a in system_arms if a != baseline]
    grids = [f"sweep/{s}/{w}" for s, system_arms in arms.items() for w, cells in (sweeps or {}).items()
             if set(cells) & set(system_arms)]
    return rows + forests + grids + CROSS


def kind(stem: str) -> str:
    return stem.split("/", 1)[0]
