"""build_index: the builtin engine's embedding index of one corpus under one arm's index-time knobs."""

from __future__ import annotations

from pathlib import Path

from crmatrix import atomic
from crmatrix.corpora.languages import dominant_language
from crmatrix.engine import index, knobs
from crmatrix.symbols import read_symbols


def run(*, symbols: Path, manifest: Path, model_dir: Path, env: dict, cache_dir: Path, out: Path,
        threads: int | None = None) -> dict:
    kn = knobs.resolve(env, dominant_language(atomic.read_json(manifest)))
    return index.build(read_symbols(symbols), kn, Path(model_dir), Path(cache_dir), Path(out), threads)
