"""Baselines: a run promoted to a reference record, and a candidate gated against one.

`promote` keeps what a later comparison needs: what the numbers stand on (corpus pin and
content hash, dataset sha256, top_k), the system's settings and version, each method's
metrics with a 95 % bootstrap interval, and every query's ranks (its reciprocal rank and
all relevant ranks), so a paired test against a candidate needs no other file.

`gate` refuses numbers that stand on something else (another corpus, dataset or depth) and
fails a `max-drop` gate only when the candidate's metric falls below the baseline's by more
than the allowed amount *and* the paired randomization test over the shared queries gives
p < ALPHA: a noisy dip passes, and so does a real change within the allowance.
"""

from __future__ import annotations

from pathlib import Path

from crmatrix import CrmatrixError, atomic
from crmatrix.analysis import check, stats
from crmatrix.evaluation import metrics
from crmatrix.results.run import MethodResult, Run

FORMAT = "crmatrix-baseline/1"
ALPHA = 0.05
QUERY_FIELDS = ("task_id", "query_type", "rank", "relevant_ranks", "n_relevant")
# What a baseline and a run must share for their numbers to be comparable.
PINS = (("corpus pin", ("corpus", "pin")), ("corpus content hash", ("corpus", "content_hash")),
        ("dataset sha256", ("dataset", "sha256")), ("top_k", ("top_k",)))


def _method(result: MethodResult) -> dict:
    rows = result.queries
    ci = {}
    for name, value in result.metrics.items():
        if name in metrics.METRICS and value is not None:  # a blob system's deeper metrics are null
            ci[name] = list(stats.bootstrap_ci(metrics.per_query(rows, name)))
    queries = [{**{k: q[k] for k in QUERY_FIELDS}, "rr": metrics.reciprocal_rank(q)} for q in rows]
    return {"response": result.response, "metrics": result.metrics, "ci": ci, "queries": queries}


def promote(run: Run, source: str) -> dict:
    """The baseline record of a run (`source`: where the run was read, for the record)."""
    prov = run.provenance
    return {
        "format": FORMAT,
        "promoted_from": source,
        "dataset": prov.dataset.to_json(),
        "corpus": {"name": prov.corpus.name, "pin": prov.corpus.pin, "content_hash": prov.corpus.content_hash},
        "top_k": run.top_k,
        "system": prov.system.to_json(),
        "system_version": prov.system_version,
        "install": prov.install,
        "arm": prov.arm.to_json(),
        "crmatrix_version": prov.crmatrix_version,
        "methods": {m: _method(res) for m, res in sorted(run.methods.items())},
    }


def default_path(record: dict) -> Path:
    return Path("baselines") / record["dataset"]["name"] / record["system"]["name"] / f"{record['arm']['name']}.json"


def read(path: Path) -> dict:
    try:
        record = atomic.read_json(Path(path))
    except OSError as e:
        raise CrmatrixError(f"{path}: cannot read the baseline: {e.strerror}") from None
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        raise CrmatrixError(f"{path}: not a crmatrix baseline (expected 'format': {FORMAT!r}; "
                            "write one with crmatrix promote RUN.json)")
    return record


def _get(obj: dict, path: tuple[str, ...]):
    for k in path:
        obj = obj.get(k) if isinstance(obj, dict) else None
    return obj


def _short(value) -> str:
    """A pin in full (one line), a long hash by its first 12 characters."""
    if isinstance(value, dict):
        return atomic.dumps_canonical(value)
    text = str(value)
    return text if len(text) <= 16 else text[:12] + "…"


def comparable(record: dict, run: Run, baseline_name: str, run_name: str) -> None:
    """Refuse a run whose numbers stand on another corpus, dataset or ranking depth."""
    facts = {"corpus": run.provenance.corpus.to_json(), "dataset": run.provenance.dataset.to_json(),
             "top_k": run.top_k}
    for what, path in PINS:
        base, got = _get(record, path), _get(facts, path)
        if base != got:
            raise CrmatrixError(f"{run_name}: not comparable with {baseline_name}: the {what} differs "
                                f"(baseline {_short(base)}, run {_short(got)})")


def _rows(rows: list[dict], query_type: str | None) -> list[dict]:
    return [r for r in rows if query_type is None or r["query_type"] == query_type]


def gate(record: dict, run: Run, gates: list[check.Gate], run_name: str = "run") -> list[dict]:
    """One result per max-drop gate: both means, Δ, its paired interval, p, and pass/fail."""
    out = []
    for g in gates:
        if g.method not in record["methods"] or g.method not in run.methods:
            raise CrmatrixError(f"{g.name}: method {g.method!r} is not in both the baseline "
                                f"({', '.join(record['methods'])}) and {run_name} ({', '.join(run.methods)})")
        if record["methods"][g.method]["metrics"].get(g.metric) is None \
                or run.methods[g.method].metrics.get(g.metric) is None:
            raise CrmatrixError(f"{g.name}: not scored in both (a blob system is scored at rank 1 only)")
        base = _rows(record["methods"][g.method]["queries"], g.query_type)
        cand = _rows(run.methods[g.method].queries, g.query_type)
        if not base:
            types = sorted({q["query_type"] for q in record["methods"][g.method]["queries"]})
            raise CrmatrixError(f"{g.name}: the baseline has no {g.query_type} queries "
                                f"(query types: {', '.join(types)})")
        try:
            cmp = stats.compare_arm(base, cand, g.metric)
        except ValueError as e:  # the same dataset file, yet other tasks: e.g. a split derived anew
            raise CrmatrixError(f"{run_name}: not comparable with the baseline: {e}") from None
        drop = cmp["base"] - cmp["arm"]
        failed = drop > g.bound + stats.TOLERANCE and cmp["p_randomization"] < ALPHA
        out.append({"gate": g.name, "max_drop": g.bound, "baseline": cmp["base"], "candidate": cmp["arm"],
                    "delta": cmp["delta_abs"], "ci_low": cmp["ci_low"], "ci_high": cmp["ci_high"],
                    "p": cmp["p_randomization"], "n": cmp["n"], "improved": cmp["improved"],
                    "regressed": cmp["regressed"], "pass": not failed})
    return out


def describe(result: dict) -> str:
    """One line: the verdict, both means, Δ against the allowance, and the test's p."""
    r = result
    drop = r["baseline"] - r["candidate"]
    if not r["pass"]:
        why = f"dropped more than {r['max_drop']:g} and p < {ALPHA:g}"
    elif drop > r["max_drop"] + stats.TOLERANCE:
        why = f"dropped more than {r['max_drop']:g}, but p ≥ {ALPHA:g}: not beyond noise"
    else:
        why = f"within the max drop {r['max_drop']:g}"
    p = "<0.001" if r["p"] < 0.001 else f"{r['p']:.3f}"
    return (f"{'PASS' if r['pass'] else 'FAIL'} {r['gate']} {r['baseline']:.3f} → {r['candidate']:.3f}, "
            f"Δ {r['delta']:+.3f} [{r['ci_low']:+.3f}, {r['ci_high']:+.3f}], p={p} "
            f"(paired randomization, {r['n']} queries, ↑{r['improved']} ↓{r['regressed']}): {why}")
