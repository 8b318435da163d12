"""The work floor of a finished run (issue 48, points 1 and 3), run by hand (not in CI):

    .venv/bin/python benchmarks/work_floor.py CLONE --config CONFIG [--sample N] [--threads T] \
        [--note TEXT] [--out FILE | --write]

What the run's work needs at the least, measured here beside what its jobs took (their CPU from
Snakemake's benchmark files):

- embedding: the distinct inputs of the texts its indexes and queries hold, per prepared model
  (`results/models/*`; an input is a text's tokens as the model reads them, truncated: texts of
  one input have one vector), at the speed of a bare ONNX Runtime loop on that model's file and
  tokenizer (a static model: its table looked up in numpy; one text a run, as crmatrix's embedder
  runs it, on T threads: the config's `embed_threads`), timed on a seeded sample of N texts of
  each model (its CPU seconds per text, times the distinct texts); crmatrix's own embedder is
  timed on the same sample, each warmed up and the two taking turns on every 100 texts (`in_turns`), and
  the two speeds' ratio is point 3's figure (>= 0.9);
- search: every query's search as the runs timed it inside their jobs (`elapsed_ms`);
- Snakemake: a trivial Snakefile running as many jobs cold, each touching a file (the CPU of
  Snakemake and its jobs).

The figure: the jobs' CPU against the floor of embedding and search (the jobs' part of the work),
and, with Snakemake's, against the whole. Machines are noisy: compare within one report. `--write`:
benchmarks/results/work-floor-<config name>-<date>-clean.md.
"""

from __future__ import annotations

import json
import random
import resource
import subprocess
import time
from pathlib import Path

import finished_run
import yaml
from clocks import cpu_by_rule
from timing import BIN, CORES, verdict, workspace

from crmatrix import atomic
from crmatrix.embed.backends import load_embedder

TARGET_RATIO, TARGET_SPEED = 1.5, 0.9


def cpu_now() -> float:
    """CPU seconds of this process and of its finished children."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def models(results: Path) -> dict[str, Path]:
    """Model sha256 -> its prepared directory."""
    return {atomic.read_json(m)["sha256"]: m.parent for m in sorted((results / "models").glob("*/model.json"))}


def distinct_texts(results: Path) -> dict[str, dict[str, str]]:
    """Model sha256 -> {text sha: text} of every text an index or a query set of the run embedded."""
    out: dict[str, dict[str, str]] = {}
    for texts in sorted((results / "index").rglob("texts.jsonl")):
        model = (atomic.read_json(texts.parent / "meta.json").get("model") or {}).get("sha256")
        if model:
            out.setdefault(model, {}).update((t["text_sha"], t["text"]) for t in atomic.read_jsonl(texts))
    for meta in sorted((results / "queries").glob("*/*/meta.json")):
        q = atomic.read_json(meta)
        out.setdefault(q["model"]["sha256"], {}).update((t["text_sha"], t["query"]) for t in q["queries"])
    return out


class BareLoop:
    """A plain ONNX Runtime loop on a prepared model's file and tokenizer: each text tokenized
    alone (truncated as crmatrix truncates), run, mean-pooled over the mask (or the graph's own
    sentence vector, `pooling` "none"), normalized."""

    def __init__(self, model_dir: Path, threads: int, spinning: bool = True):
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.meta = atomic.read_json(model_dir / "model.json")
        self.tokenizer = Tokenizer.from_file(str(model_dir / self.meta["tokenizer"]))
        self.tokenizer.enable_truncation(max_length=256)
        self.tokenizer.no_padding()  # the file may pad every text to a fixed length; one text needs none
        opts = ort.SessionOptions()
        opts.intra_op_num_threads, opts.inter_op_num_threads = threads, 1
        if not spinning:  # ONNX Runtime's pool threads spin between runs by default (spinning.py)
            opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.session = ort.InferenceSession(str(model_dir / self.meta["onnx"]), opts,
                                            providers=["CPUExecutionProvider"])
        self.names = {i.name for i in self.session.get_inputs()}

    def tokens(self, text: str) -> tuple[int, ...]:
        """The model's input: the ids (the mask and segment of one text follow from them)."""
        return tuple(self.tokenizer.encode(text).ids)

    def encode(self, texts: list[str]) -> list:
        import numpy as np

        out = []
        for text in texts:
            e = self.tokenizer.encode(text)
            feeds = {"input_ids": np.array([e.ids], dtype=np.int64),
                     "attention_mask": np.array([e.attention_mask], dtype=np.int64),
                     "token_type_ids": np.array([e.type_ids], dtype=np.int64)}
            states = self.session.run([self.meta["output"]], {k: v for k, v in feeds.items() if k in self.names})[0]
            vector = states[0].mean(axis=0) if self.meta.get("pooling", "mean") == "mean" else states[0]
            out.append(vector / max(float(np.linalg.norm(vector)), 1e-12))
        return out


class BareStatic:
    """A static (model2vec) model's table read with safetensors and looked up in numpy: each
    text's tokens (no special tokens nor the unknown token, truncated at model2vec's 512), their rows (through the
    quantized vocabulary's mapping and weights when it has them) averaged, normalized."""

    def __init__(self, model_dir: Path, threads: int):
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length=512)
        self.tokenizer.no_padding()
        unk = json.loads(self.tokenizer.to_str())["model"].get("unk_token")
        self.unk = None if unk is None else self.tokenizer.token_to_id(unk)
        tensors = load_file(str(model_dir / "model.safetensors"))
        self.table, self.mapping, self.weights = tensors["embeddings"], tensors.get("mapping"), tensors.get("weights")

    def tokens(self, text: str) -> tuple[int, ...]:
        return tuple(i for i in self.tokenizer.encode(text, add_special_tokens=False).ids if i != self.unk)

    def encode(self, texts: list[str]) -> list:
        import numpy as np

        out = []
        for text in texts:
            ids = np.array(self.tokens(text), dtype=np.int64)
            rows = self.table[ids if self.mapping is None else self.mapping[ids]]
            if self.weights is not None:
                rows = rows * self.weights[ids][:, None]
            vector = rows.mean(axis=0) if len(ids) else np.zeros(self.table.shape[1], dtype=np.float32)
            out.append(vector / max(float(np.linalg.norm(vector)), 1e-12))
        return out


BARE = {"onnx": BareLoop, "static": BareStatic}


def in_turns(texts: list[str], embedders: dict, n: int = 2, chunk: int = 100) -> dict[str, tuple[float, float]]:
    """Each embedder's CPU and wall seconds over `texts`, the mean of `n` passes: in each pass the
    embedders take turns on every `chunk` texts, their order reversed from one chunk to the next.
    These machines' speed drifts by a third within a minute (a 500-text sample of the fp32 MiniLM
    ran at 41 to 57 texts/CPU s in four runs); timing one embedder's whole sample after the other's
    let a slow stretch fall on one alone (a ratio of 0.83 where reruns gave 1.01 to 1.12)."""
    took = {name: [0.0, 0.0] for name in embedders}
    for _ in range(n):
        for i, start in enumerate(range(0, len(texts), chunk)):
            names = list(embedders)
            for name in names[::-1] if i % 2 else names:
                cpu, wall = cpu_now(), time.perf_counter()
                embedders[name].encode(texts[start:start + chunk])
                took[name][0] += cpu_now() - cpu
                took[name][1] += time.perf_counter() - wall
    return {name: (cpu / n, wall / n) for name, (cpu, wall) in took.items()}


def bare_loop(model_dir: Path, threads: int):
    backend = atomic.read_json(model_dir / "model.json")["backend"]
    if backend not in BARE:
        raise SystemExit(f"{model_dir}: no bare loop for a {backend!r} model (work_floor.py times {', '.join(BARE)})")
    return BARE[backend](model_dir, threads)


def distinct_inputs(bare, texts: list[str]) -> list[str]:
    """The first of `texts` of each distinct input of the model (`bare.tokens`): the others have its vector."""
    first: dict[tuple[int, ...], str] = {}
    for text in texts:
        first.setdefault(bare.tokens(text), text)
    return list(first.values())


def timed(texts: list[str], model_dir: Path, bare, threads: int, turns: int = 2) -> tuple[float, float]:
    """CPU seconds of the `bare` loop and of crmatrix's embedder over `texts`, each built and warmed
    up first, taking turns (`in_turns`)."""
    mine = load_embedder(atomic.read_json(model_dir / "model.json"), model_dir, threads)
    for embedder in (bare, mine):
        embedder.encode(texts[:5])
    best = in_turns(texts, {"bare": bare, "crmatrix": mine}, turns)
    return best["bare"][0], best["crmatrix"][0]


def search_seconds(results: Path) -> tuple[float, int]:
    """Every query's search as its run timed it, summed; and the searches."""
    total, n = 0.0, 0
    for run in sorted((results / "runs").glob("*/*/*.json")):
        for method in json.loads(run.read_text())["methods"].values():
            for q in method["queries"]:
                total, n = total + q["elapsed_ms"] / 1000, n + 1
    return total, n


def snakemake_run_floor(jobs: int) -> float:
    """CPU seconds of a trivial Snakefile running `jobs` jobs cold, each touching a file: its
    scheduler lightened as the matrix's (crmatrix.pipeline.scheduling)."""
    trivial = workspace("trivial-run")
    (trivial / "Snakefile").write_text(
        "from crmatrix.pipeline import scheduling\n\n"
        "onstart:\n    scheduling.drop_local_rate_limit(workflow.scheduler, workflow.local_exec)\n"
        "    scheduling.measure_inputs_once(workflow.scheduler)\n"
        "    scheduling.checksum_inputs_once(workflow.persistence)\n\n"
        f"rule all:\n    input: expand('out/{{i}}.txt', i=range({jobs}))\n\n\n"
        "rule one:\n    output: 'out/{i}.txt'\n    shell: 'touch {output}'\n")
    start = cpu_now()
    subprocess.run([str(BIN / "snakemake"), "--cores", str(CORES)], cwd=trivial, capture_output=True, check=True,
                   timeout=3600)
    return cpu_now() - start


def floor_lines(clone: Path, config: str, sample: int = 500, threads: int | None = None,
                run_cpu: float | None = None, heading: str = "##") -> list[str]:
    """The work floor of the finished run in `clone` (of `config`): its embedding, search and
    Snakemake parts against the jobs' CPU; with `run_cpu` (a cold run's CPU, Snakemake's main
    process and every job, as the run's command measured it), that against the whole floor too:
    issue 48's figure. `heading`: the level of its sections' titles."""
    results = clone / "results"
    if threads is None:  # the config's, else the schema's default
        threads = (yaml.safe_load((clone / config).read_text()) or {}).get("embed_threads", 2)
    by_rule = cpu_by_rule(clone)
    jobs, job_cpu = sum(n for n, _, _ in by_rule.values()), sum(c for _, _, c in by_rule.values())
    lines = [f"The jobs' CPU: **{job_cpu:.0f} s** over {jobs} jobs (each job's process reporting itself where the run "
             "had it do so, clocks.py's JOB_CLOCK; else Snakemake's benchmark files, which sample a job each second "
             "for its first 30 s, then every 30 s: a lower bound).", "",
             f"{heading} Embedding at the floor", "",
             f"Per model, {sample} of its distinct texts (seeded) through a bare ONNX Runtime loop and "
             f"through crmatrix's embedder, {threads} thread(s), CPU seconds; the floor is every distinct "
             "input (a text's tokens as the model reads them) at the bare loop's speed.", "",
             "| model | distinct texts | distinct inputs | bare texts/CPU s | crmatrix texts/CPU s | crmatrix / bare "
             "| floor CPU s |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    dirs, embed_floor, speeds = models(results), 0.0, []
    for model, texts in sorted(distinct_texts(results).items()):
        if model not in dirs:
            raise SystemExit(f"{results}/models: no prepared model of sha256 {model}, which the run embedded with")
        loop = bare_loop(dirs[model], threads)
        inputs = distinct_inputs(loop, sorted(texts.values()))
        chosen = random.Random(0).sample(inputs, min(sample, len(inputs)))
        bare, mine = timed(chosen, dirs[model], loop, threads)
        floor = len(inputs) * bare / len(chosen)
        embed_floor += floor
        speeds.append(bare / mine)
        lines.append(f"| {dirs[model].name} | {len(texts):,} | {len(inputs):,} | {len(chosen) / bare:.1f} | "
                     f"{len(chosen) / mine:.1f} | {bare / mine:.2f} | {floor:.0f} |")
    searched, searches = search_seconds(results)
    smk = snakemake_run_floor(jobs)
    worked = embed_floor + searched
    lines += ["", f"crmatrix's embedder at {min(speeds, default=0):.2f}x the bare loop's speed at the least (issue 48: "
              f">= {TARGET_SPEED}).", "", f"{heading} The work floor", "",
              "| part | CPU s |", "|---|---:|",
              f"| embedding (above) | {embed_floor:.0f} |",
              f"| search ({searches:,} searches, as the runs timed them) | {searched:.0f} |",
              f"| Snakemake running {jobs} trivial jobs cold | {smk:.0f} |", "",
              f"The jobs' CPU against the floor of their work (embedding and search): **{job_cpu / worked:.2f}x**; "
              f"against the whole floor, Snakemake's part too: **{job_cpu / (worked + smk):.2f}x** (the jobs' CPU "
              "leaves out Snakemake's own process, the whole floor holds it)."]
    if run_cpu is not None:
        ratio = run_cpu / (worked + smk)
        lines += ["", f"The cold run's CPU (Snakemake and every job, {run_cpu:.0f} s) against the whole floor "
                  f"({worked + smk:.0f} s): **{ratio:.2f}x** (issue 48: <= {TARGET_RATIO}x): "
                  f"{verdict(ratio <= TARGET_RATIO)}."]
    return lines


def main() -> None:
    p = finished_run.parser("work_floor.py", __doc__, "work-floor-CONFIG")
    p.add_argument("--config", required=True, help="the config the run made")
    p.add_argument("--sample", type=int, default=500, help="texts timed per model (default 500)")
    p.add_argument("--threads", type=int, help="the embedding threads (default: the config's embed_threads)")
    args = p.parse_args()
    clone = args.clone.resolve()
    lines = finished_run.run_lines(clone, args.note, "The work floor", args.config)
    lines += floor_lines(clone, args.config, args.sample, args.threads)
    finished_run.emit(lines, args.out, args.write, f"work-floor-{Path(args.config).stem}")


if __name__ == "__main__":
    main()
